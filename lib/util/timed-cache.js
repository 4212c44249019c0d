'use strict'

const { LRUCache } = require('lru-cache')

/**
 * The one cache every part of the file store stands on: lru-cache, bounded
 * by a count of entries and optionally by a size budget, whose entries
 * expire `ttl` ms after they were set. Its clock is performance.now, so
 * setting the system clock back keeps nothing longer. A `ttl` of 0 means
 * "keep nothing" here (lru-cache would read it as "keep for ever"): every
 * lookup misses and nothing is stored.
 * @param {object} options
 * @param {number} options.ttl ms an entry is served after it was set;
 *   Infinity for entries whose owner judges their age itself
 * @param {number} options.max entries at most
 * @param {number} [options.maxSize] a budget of sizes at most
 * @param {(value: *, key: string) => number} [options.sizeOf] an entry's size, with maxSize
 * @param {{now: () => number}} [options.clock] for tests: a clock of their own
 * @returns {{get: (key: string) => *, peek: (key: string) => *, set: (key: string, value: *) => void,
 *   delete: (key: string) => boolean, clear: () => void, readonly size: number}}
 */
function createTimedCache ({ ttl, max, maxSize, sizeOf, clock }) {
  if (ttl <= 0 || max <= 0) return KEEPS_NOTHING
  // Infinity: entries never expire here; their owner checks their age.
  const options = ttl === Infinity ? { max } : { max, ttl }
  if (maxSize !== undefined) {
    options.maxSize = maxSize
    options.sizeCalculation = sizeOf
  }
  if (clock !== undefined) {
    options.perf = clock
    // lru-cache otherwise reads its clock once per millisecond.
    options.ttlResolution = 0
  }
  return new LRUCache(options)
}

const KEEPS_NOTHING = Object.freeze({
  get () { return undefined },
  peek () { return undefined },
  set () {},
  delete () { return false },
  clear () {},
  size: 0
})

module.exports = { createTimedCache }
