'use strict'

const { LRUCache } = require('lru-cache')
const { judge, addAdmitted } = require('./bucket')

// How often a worker tells the primary what it admitted, and learns what
// the others did: the bound on how stale a worker's view of a key is.
const SYNC_MS = 100
// A worker waits this long for the primary's answer; without one, its own
// buckets go on alone (per-worker limits) until the next exchange.
const SYNC_TIMEOUT_MS = 1000
const NO_VERDICT = Object.freeze({ admitted: true, wait: 0, remaining: Infinity, tat: 0 })

/**
 * One key of one rule in this worker.
 * @private
 */
class KeyState {
  constructor () {
    this.tat = 0
    // Admitted here and not yet reported to the primary; and those of the
    // report on its way (added to the primary's answer when it comes).
    this.unsent = 0
    this.inFlight = 0
    // When the first of the unsent ones was admitted: the primary's bucket
    // leaks from then, not from when it hears of them.
    this.firstUnsent = 0
    // Requests of this key in progress here, and in the other workers as
    // last reported.
    this.active = 0
    this.othersActive = 0
  }
}

/**
 * The limits of `rateLimits` in one worker: a bucket per rule and key
 * (lib/traffic/bucket.js), judged here without asking anyone, and every
 * SYNC_MS reconciled with the primary's (lib/traffic/shared-buckets.js),
 * which adds up what every worker admitted: a key's bucket fills with the
 * requests of all workers, so the server admits the configured rate, not
 * the rate times the workers. Between two exchanges each worker may admit
 * what its own view allows; docs/traffic.md states the overshoot.
 */
class RateLimiter {
  /**
   * @param {import('./rules').RateLimitRule[]} rules
   * @param {import('../ipc').Peer} coordinator
   */
  constructor (rules, coordinator) {
    this.rules = rules
    this.coordinator = coordinator
    this.keys = rules.map((rule) => new LRUCache({ max: rule.maxKeys }))
    // Keys with something to report, per rule.
    this.changed = rules.map(() => new Set())
    this.syncing = false
    this.timer = setInterval(() => this.sync(), SYNC_MS)
    this.timer.unref()
  }

  /**
   * @param {import('./rules').RateLimitRule} rule
   * @param {string} key
   * @returns {KeyState}
   */
  state (rule, key) {
    const keys = this.keys[rule.number]
    let state = keys.get(key)
    if (state === undefined) {
      state = new KeyState()
      keys.set(key, state)
    }
    return state
  }

  /**
   * Judge one request against one rule without counting it.
   * @param {import('./rules').RateLimitRule} rule
   * @param {KeyState} state
   * @param {number} now
   * @returns {{admitted: boolean, wait: number, remaining: number, tat: number, connections?: boolean}}
   */
  judge (rule, state, now) {
    if (rule.connections !== null && state.active + state.othersActive >= rule.connections) {
      return { admitted: false, wait: 1000, remaining: 0, tat: state.tat, connections: true }
    }
    return rule.bucket === null ? NO_VERDICT : judge(state.tat, rule.bucket, now)
  }

  /**
   * Count an admitted request.
   * @param {import('./rules').RateLimitRule} rule
   * @param {string} key
   * @param {KeyState} state
   * @param {{tat: number}} verdict
   */
  admit (rule, key, state, verdict) {
    if (rule.bucket !== null) {
      state.tat = verdict.tat
      if (state.unsent++ === 0) state.firstUnsent = verdict.tat - rule.bucket.interval
    }
    if (rule.connections !== null) state.active++
    this.changed[rule.number].add(key)
  }

  /**
   * A request admitted by a rule with `connections` is over.
   * @param {import('./rules').RateLimitRule} rule
   * @param {string} key
   * @param {KeyState} state
   */
  release (rule, key, state) {
    state.active--
    this.changed[rule.number].add(key)
  }

  // Tell the primary what was admitted since the last exchange and which
  // requests are in progress; take its buckets, which hold every worker's.
  sync () {
    if (this.syncing) return
    const report = []
    this.rules.forEach((rule, number) => {
      const keys = []
      const counts = []
      const since = []
      const active = []
      for (const key of this.changed[number]) {
        const state = this.keys[number].peek(key)
        if (state === undefined) continue
        keys.push(key)
        counts.push(state.unsent)
        since.push(state.firstUnsent)
        active.push(state.active)
        state.inFlight = state.unsent
        state.unsent = 0
      }
      this.changed[number].clear()
      // Keys with requests in progress are reported each time, so that the
      // primary can tell a live count from a dead worker's.
      for (const [key, state] of this.keys[number].entries()) {
        if (state.active !== 0 && !keys.includes(key)) {
          keys.push(key)
          counts.push(0)
          since.push(0)
          active.push(state.active)
          state.inFlight = 0
        }
      }
      if (keys.length !== 0) report.push({ id: rule.id, interval: rule.bucket === null ? 0 : rule.bucket.interval, maxKeys: rule.maxKeys, keys, counts, since, active })
    })
    if (report.length === 0) return
    this.syncing = true
    this.coordinator.request('rate-sync', { rules: report }, { timeout: SYNC_TIMEOUT_MS }).then(
      (answer) => this.apply(report, answer),
      () => this.unsend(report)
    ).finally(() => { this.syncing = false })
  }

  apply (report, answer) {
    const now = Date.now()
    if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.rules)) return this.unsend(report)
    report.forEach((sent, index) => {
      const rule = this.rules.find((candidate) => candidate.id === sent.id)
      const shared = answer.rules[index]
      if (rule === undefined || shared === undefined || !Array.isArray(shared.tats)) return
      sent.keys.forEach((key, i) => {
        const state = this.keys[rule.number].peek(key)
        if (state === undefined) return
        state.inFlight = 0
        // The primary's bucket holds what every worker reported, this one's
        // included; what was admitted here since goes on top. Never lower
        // than this worker's own (a primary that lost its buckets).
        if (rule.bucket !== null && typeof shared.tats[i] === 'number') {
          state.tat = Math.max(state.tat, addAdmitted(shared.tats[i], state.unsent, rule.bucket.interval, now))
        }
        if (typeof shared.others[i] === 'number') state.othersActive = shared.others[i]
      })
    })
  }

  // The primary did not answer: the counts go out with the next exchange.
  unsend (report) {
    for (const sent of report) {
      const rule = this.rules.find((candidate) => candidate.id === sent.id)
      if (rule === undefined) continue
      sent.keys.forEach((key) => {
        const state = this.keys[rule.number].peek(key)
        if (state === undefined) return
        state.unsent += state.inFlight
        state.inFlight = 0
        this.changed[rule.number].add(key)
      })
    }
  }

  stop () {
    clearInterval(this.timer)
  }
}

module.exports = { RateLimiter, SYNC_MS }
