'use strict'

const fs = require('node:fs/promises')
const { createTimedCache } = require('../util/timed-cache')

// A path that does not exist, or crosses a file where a directory should
// be: remembered as absent, like a present file.
const ABSENT = new Set(['ENOENT', 'ENOTDIR'])
// Longer paths are stat'ed every time: with targets of up to 8 KiB, a flood
// of made-up paths could otherwise pin 4096 of them (32 MiB) per worker.
const MAX_PATH_LENGTH = 1024

/**
 * A short-lived, bounded cache of `fs.stat` results (like nginx's
 * open_file_cache). A hot path costs no syscall, and a missing one no
 * exception, for `ttl` ms; after that the next request stats it afresh, so
 * a change on disk shows within `ttl` ms. Concurrent lookups of one path
 * share a single stat. Errors other than absence (EACCES, ELOOP) are not
 * kept: each request sees its own. A `ttl` of 0 keeps nothing.
 * @param {{ttl: number, maxEntries: number, clock?: {now: () => number}}} options
 */
function createStatCache ({ ttl, maxEntries, clock }) {
  const entries = createTimedCache({ ttl, max: maxEntries, clock })

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
      if (entry !== null && entries.get(file) === entry) entries.delete(file)
      throw err
    })
  }

  /**
   * @param {string} file absolute path
   * @returns {{promise: Promise<import('node:fs').Stats|null>, cached: boolean}}
   *   the stats (null when absent) and whether they were taken by an earlier
   *   lookup, so may be up to `ttl` ms old; rejects with other errors
   */
  function lookup (file) {
    const known = file.length > MAX_PATH_LENGTH ? undefined : entries.get(file)
    if (known !== undefined) return known.hit
    // value: the settled stats (null: absent) for peek, undefined until then;
    // fresh: made by fresh().
    const entry = { promise: null, hit: null, value: undefined, fresh: false }
    entry.promise = load(file, file.length > MAX_PATH_LENGTH ? null : entry)
    entry.hit = { promise: entry.promise, cached: true }
    if (file.length <= MAX_PATH_LENGTH) entries.set(file, entry)
    return { promise: entry.promise, cached: false }
  }

  /**
   * What lookup would give, without waiting: a hot path costs no promise.
   * @param {string} file absolute path
   * @returns {import('node:fs').Stats | null | undefined} the stats, null when
   *   absent, undefined unless they are settled and less than `ttl` ms old
   */
  function peek (file) {
    const entry = entries.get(file)
    return entry === undefined ? undefined : entry.value
  }

  /**
   * Stats taken now, never an earlier lookup's (but one fresh() started and
   * still waits for is shared): kept for the next ones.
   * @param {string} file absolute path
   * @returns {Promise<import('node:fs').Stats|null>}
   */
  function fresh (file) {
    // Requests that ask at once share the stat one of them started: when a
    // held file's time is up, a crowd of HTTP/2 streams for it would
    // otherwise stat it once each.
    const known = entries.get(file)
    if (known !== undefined && known.fresh && known.value === undefined) return known.promise
    entries.delete(file)
    const taken = lookup(file)
    const entry = entries.get(file)
    if (entry !== undefined) entry.fresh = true
    return taken.promise
  }

  return {
    lookup,
    peek,
    fresh,
    /** @param {string} file drop what is known of it: the next lookup stats afresh */
    forget (file) { entries.delete(file) },
    get size () { return entries.size }
  }
}

module.exports = { createStatCache }
