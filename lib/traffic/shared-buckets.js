'use strict'

const { LRUCache } = require('lru-cache')
const { addAdmitted } = require('./bucket')

// A worker's count of requests in progress that it has not repeated for
// this long is a dead worker's.
const ACTIVE_TTL_MS = 1000

/**
 * The primary's side of `rateLimits`: per rule and key, the bucket that
 * every worker's admissions fill (its TAT), and each worker's requests in
 * progress. Workers report every 100 ms (lib/traffic/limiter.js); the
 * answer gives each key's TAT and the others' requests in progress.
 * Lives as long as the coordinator, so limits hold across reloads.
 */
class SharedBuckets {
  constructor () {
    this.rules = new Map()
    // The fleet's buckets in the store (share), null without one.
    this.fleet = null
  }

  /**
   * Fill the fleet's buckets too: every key a worker reports goes to the
   * store, and the fleet's TAT and requests in progress come back into
   * this instance's answers.
   * @param {(apply: Function) => import('./fleet-buckets').FleetBuckets} makeFleet
   */
  share (makeFleet) {
    this.fleet = makeFleet((ruleId, key, tat, others) => this.fromFleet(ruleId, key, tat, others))
  }

  fromFleet (ruleId, key, tat, others) {
    const entry = this.rules.get(ruleId)?.get(key)
    if (entry === undefined) return
    if (tat > entry.tat) entry.tat = tat
    entry.fleetActive = others
  }

  /**
   * @param {{rules: Array<{id: string, interval: number, maxKeys: number, keys: string[], counts: number[], since: number[],
   *   active: number[]}>}} msg since: when the first of each key's counted requests was admitted
   * @param {object} from the reporting worker's Peer
   * @returns {{rules: Array<{tats: number[], others: number[]}>}}
   */
  report (msg, from) {
    if (msg === null || typeof msg !== 'object' || !Array.isArray(msg.rules)) throw new TypeError('malformed rate-sync')
    const now = Date.now()
    return { rules: msg.rules.map((rule) => this.reportRule(rule, from, now)) }
  }

  reportRule (rule, from, now) {
    if (typeof rule.id !== 'string' || !Array.isArray(rule.keys) || !Array.isArray(rule.counts) || !Array.isArray(rule.active) ||
      !Number.isInteger(rule.maxKeys) || rule.maxKeys < 1) {
      throw new TypeError('malformed rate-sync rule')
    }
    let keys = this.rules.get(rule.id)
    if (keys === undefined) {
      // As many keys as each worker keeps: a key a worker dropped is
      // dropped here too, rather than brought back by the next exchange.
      keys = new LRUCache({ max: rule.maxKeys })
      this.rules.set(rule.id, keys)
    }
    const tats = []
    const others = []
    rule.keys.forEach((key, i) => {
      let entry = keys.get(key)
      if (entry === undefined) {
        // fleetActive: requests in progress on the other instances.
        entry = { tat: 0, active: new Map(), fleetActive: 0 }
        keys.set(key, entry)
      }
      const count = rule.counts[i]
      // The bucket leaks from when the worker admitted the first of them
      // (the start of its bucket slot), not from when it reported them.
      const since = Array.isArray(rule.since) && typeof rule.since[i] === 'number' ? Math.min(rule.since[i], now) : now
      if (rule.interval > 0 && Number.isInteger(count) && count > 0) entry.tat = addAdmitted(entry.tat, count, rule.interval, since)
      const active = rule.active[i]
      if (Number.isInteger(active) && active > 0) entry.active.set(from, { count: active, at: now })
      else entry.active.delete(from)
      const othersHere = othersActive(entry, from, now)
      if (this.fleet !== null) {
        const admitted = rule.interval > 0 && Number.isInteger(count) && count > 0 ? count : 0
        this.fleet.note(rule.id, key, rule.interval, admitted, since, othersHere + (active > 0 ? active : 0))
      }
      tats.push(entry.tat)
      others.push(othersHere + entry.fleetActive)
    })
    return { tats, others }
  }
}

function othersActive (entry, from, now) {
  let sum = 0
  for (const [peer, { count, at }] of entry.active) {
    if (now - at > ACTIVE_TTL_MS) entry.active.delete(peer)
    else if (peer !== from) sum += count
  }
  return sum
}

/**
 * Coordinator services of `rateLimits`.
 * @param {SharedBuckets} buckets the coordinator's
 * @returns {Object<string, Function>}
 */
function rateLimitServices (buckets) {
  return { 'rate-sync': (msg, from) => buckets.report(msg, from) }
}

module.exports = { SharedBuckets, rateLimitServices }
