'use strict'

const { LRUCache } = require('lru-cache')

/**
 * The one cache every part of the file store stands on: bounded by a count
 * of entries, and optionally by a size budget, with entries that expire
 * `ttl` ms after they were set. A `ttl` of 0 means "keep nothing": every
 * lookup misses and nothing is stored.
 *
 * With a size budget (the held file bodies) it is lru-cache, which drops
 * the entry used least recently. Without one it is an ExpiringMap: the
 * stat cache and its kin are asked on every request, where lru-cache's
 * get (its staleness check reads performance.now through a closure, its
 * coarse clock is a timer made anew each millisecond, and a hit reorders
 * its lists) cost about 140 instruction-cache and 50 data-cache misses a
 * hello request (callgrind, one process), and an entry that expires `ttl`
 * ms after it was taken gains little from being kept by its last use.
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
  if (maxSize === undefined) return new ExpiringMap(ttl, max, clock === undefined ? Date : clock)
  // Infinity: entries never expire here; their owner checks their age.
  const options = ttl === Infinity ? { max } : { max, ttl }
  options.maxSize = maxSize
  options.sizeCalculation = sizeOf
  if (clock !== undefined) {
    options.perf = clock
    // lru-cache otherwise reads its clock once per millisecond.
    options.ttlResolution = 0
  }
  return new LRUCache(options)
}

/**
 * Entries in the order they were set; the one set longest ago goes first
 * when a new one would pass `max`. An entry is served for `ttl` ms after it
 * was set, by the wall clock read at each lookup (Date.now, a builtin:
 * performance.now checks its receiver in JavaScript first). An entry from
 * the clock's future, which a clock set back leaves behind, is expired:
 * setting the clock back keeps nothing longer.
 */
class ExpiringMap {
  /**
   * @param {number} ttl
   * @param {number} max
   * @param {{now: () => number}} clock
   */
  constructor (ttl, max, clock) {
    this.ttl = ttl
    this.max = max
    this.clock = clock
    this.entries = new Map()
  }

  get (key) {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (this.isFresh(entry)) return entry.value
    this.entries.delete(key)
    return undefined
  }

  peek (key) {
    const entry = this.entries.get(key)
    return entry !== undefined && this.isFresh(entry) ? entry.value : undefined
  }

  set (key, value) {
    // Set again, it moves to the end: the order is by when it was taken.
    this.entries.delete(key)
    this.entries.set(key, new Entry(value, this.clock.now()))
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value)
  }

  delete (key) {
    return this.entries.delete(key)
  }

  clear () {
    this.entries.clear()
  }

  get size () {
    return this.entries.size
  }

  isFresh (entry) {
    const age = this.clock.now() - entry.time
    return age >= 0 && age <= this.ttl
  }
}

class Entry {
  constructor (value, time) {
    this.value = value
    this.time = time
  }
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
