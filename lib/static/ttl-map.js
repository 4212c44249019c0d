'use strict'

const { performance } = require('node:perf_hooks')

/**
 * Keys remembered for a short time, in a bounded map: what the static stage
 * knows to be absent (index files, sidecars), so that a missing file costs
 * one stat per `ttl` rather than one per request. A file created meanwhile
 * is found at the latest `ttl` ms later; with a `ttl` of 0 nothing is kept.
 * The clock is monotonic: setting the system clock back keeps nothing longer.
 * @param {{ttl: number, maxEntries: number}} options
 */
function createTtlMap ({ ttl, maxEntries }) {
  const entries = new Map()

  /**
   * @param {string} key
   * @returns {*} the value stored less than `ttl` ms ago, or undefined
   */
  function get (key) {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (performance.now() - entry.time < ttl) return entry.value
    entries.delete(key)
    return undefined
  }

  function set (key, value) {
    if (ttl <= 0) return
    if (entries.size >= maxEntries && !entries.has(key)) entries.delete(entries.keys().next().value)
    entries.set(key, { time: performance.now(), value })
  }

  return { get, set }
}

module.exports = { createTtlMap }
