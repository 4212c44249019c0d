'use strict'

const fs = require('node:fs/promises')
const { performance } = require('node:perf_hooks')

// A path that does not exist, or crosses a file where a directory should
// be: remembered as absent, like a present file.
const ABSENT = new Set(['ENOENT', 'ENOTDIR'])
// Longer paths are stat'ed every time: with targets of up to 8 KiB, a flood
// of made-up paths could otherwise pin 4096 of them (32 MiB) per worker.
const MAX_PATH_LENGTH = 1024

/**
 * A short-lived, bounded cache of `fs.stat` results, for one process (like
 * nginx's open_file_cache). A hot path costs no syscall, and a missing one
 * no exception, for `ttl` ms; after that the next request stats it afresh,
 * so a change on disk shows within `ttl` ms. Concurrent lookups of one path
 * share a single stat. Errors other than absence (EACCES, ELOOP) are not
 * kept: each request sees its own. A `ttl` of 0 keeps nothing: every
 * lookup is a stat of its own. Time comes from a monotonic clock, so that
 * setting the system clock back cannot keep an entry for longer.
 * @param {{ttl?: number, maxEntries?: number, now?: () => number}} [options]
 * @returns {{lookup: (file: string) => {promise: Promise<import('node:fs').Stats|null>, cached: boolean},
 *   peek: (file: string) => import('node:fs').Stats | null | undefined,
 *   forget: (file: string) => void, clear: () => void, configure: (options: {ttl: number}) => void,
 *   readonly size: number}}
 */
function createStatCache ({ ttl = 1000, maxEntries = 4096, now = performance.now.bind(performance) } = {}) {
  const entries = new Map()

  function remember (file, entry) {
    if (entries.size >= maxEntries && !entries.has(file)) {
      // Oldest inserted first out: Map iterates in insertion order.
      entries.delete(entries.keys().next().value)
    }
    // A path looked up again goes to the back of the line.
    entries.delete(file)
    entries.set(file, entry)
  }

  function load (file, entry) {
    return fs.stat(file).then((stats) => {
      if (entry !== null) entry.value = stats
      return stats
    }, (err) => {
      if (ABSENT.has(err.code)) {
        if (entry !== null) entry.value = null
        return null
      }
      // Not remembered: the next request tries again and sees its own error.
      if (entries.get(file) === entry) entries.delete(file)
      throw err
    })
  }

  /**
   * @param {string} file absolute path
   * @returns {{promise: Promise<import('node:fs').Stats|null>, cached: boolean}}
   *   the stats (null when absent) and whether they were taken by an earlier
   *   request, so may be up to `ttl` ms old; rejects with other errors
   */
  function lookup (file) {
    if (ttl <= 0 || file.length > MAX_PATH_LENGTH) return { promise: load(file, null), cached: false }
    const time = now()
    const entry = entries.get(file)
    if (entry !== undefined && time - entry.time < ttl) return entry.hit
    // value: the settled stats (null: absent) for peek, undefined until then.
    const fresh = { time, promise: null, hit: null, value: undefined }
    fresh.promise = load(file, fresh)
    fresh.hit = { promise: fresh.promise, cached: true }
    remember(file, fresh)
    return { promise: fresh.promise, cached: false }
  }

  /**
   * What lookup would give, without waiting: a hot path costs no promise.
   * @param {string} file absolute path
   * @returns {import('node:fs').Stats | null | undefined} the stats, null when
   *   absent, undefined unless they are settled and less than `ttl` ms old
   */
  function peek (file) {
    const entry = entries.get(file)
    if (entry === undefined || now() - entry.time >= ttl) return undefined
    return entry.value
  }

  return {
    lookup,
    peek,
    /** @param {string} file drop what is known of it: the next lookup stats afresh */
    forget (file) { entries.delete(file) },
    clear () { entries.clear() },
    /** @param {{ttl: number}} options a new TTL in ms; what is known is dropped */
    configure (options) {
      ttl = options.ttl
      entries.clear()
    },
    get size () { return entries.size }
  }
}

// One per process: every request of a worker shares it. Its TTL is
// fileCacheTtl, set where the worker builds its pipeline.
const processStatCache = createStatCache()

module.exports = { createStatCache, processStatCache }
