'use strict'

const { createHash } = require('node:crypto')
const { hashString } = require('./hash')

// A recovered upstream starts at this share of its weight under slowStart.
const SLOW_START_FLOOR = 0.1

/**
 * An upstream as one route uses it: the worker-wide Upstream (pool, health,
 * requests in flight) with what the route's entry says of it (weight,
 * backup, connection limit), and the route's per-upstream state (its
 * smooth round-robin credit, its cookie id, its hash seed).
 */
class Member {
  /**
   * @param {import('./upstream').Upstream} upstream
   * @param {import('./upstream-entry').UpstreamEntry} entry
   * @param {number} limit requests in flight this worker may send it (Infinity: no limit)
   * @param {number} slowStart ms of the ramp after it came back
   */
  constructor (upstream, entry, limit, slowStart) {
    this.upstream = upstream
    this.weight = entry.weight
    this.backup = entry.backup
    this.limit = limit
    this.slowStart = slowStart
    // Smooth weighted round-robin's running credit (lib/proxy/balance.js).
    this.credit = 0
    // The cookie policy's value: a digest that names the upstream without
    // giving its address away, the same in every worker and after restarts.
    this.id = createHash('sha256').update(upstream.name).digest('base64url').slice(0, 16)
    // Rendezvous hashing mixes the client's hash with this.
    this.seed = hashString(upstream.name)
  }

  /** @returns {boolean} whether this worker may send it one more request */
  hasRoom () {
    return this.upstream.inFlight < this.limit
  }

  /**
   * Its weight now: under slowStart, an upstream back from an exclusion
   * ramps from a tenth of it to all of it.
   * @param {number} now ms
   * @returns {number}
   */
  weightAt (now) {
    if (this.slowStart === 0) return this.weight
    const since = now - this.upstream.upSince
    if (since >= this.slowStart) return this.weight
    return this.weight * (SLOW_START_FLOOR + (1 - SLOW_START_FLOOR) * Math.max(0, since) / this.slowStart)
  }
}

/**
 * The share of a route's `maxConnections` one worker takes: an even part,
 * at least one request, so that every worker can reach the upstream.
 * @param {number} max the configured limit, 0 for none
 * @param {number} workers
 * @returns {number}
 */
function workerShare (max, workers) {
  if (max === 0) return Infinity
  return Math.max(1, Math.floor(max / workers))
}

module.exports = { Member, workerShare }
