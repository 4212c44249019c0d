'use strict'

const { LRUCache } = require('lru-cache')

/**
 * Rendered listings, least recently used evicted first, bounded both in
 * count and in bytes (a 10,000-entry listing is a few megabytes).
 * @param {{maxEntries: number, maxBytes: number}} limits
 */
function createPageCache ({ maxEntries, maxBytes }) {
  // One page bigger than the whole budget is served but not kept
  // (lru-cache's maxEntrySize is maxSize).
  const pages = new LRUCache({ max: maxEntries, maxSize: maxBytes, sizeCalculation: sizeOf })

  return {
    /**
     * @param {string} key
     * @returns {object|undefined} the page, now the most recently used
     */
    get (key) { return pages.get(key) },
    /**
     * @param {string} key
     * @param {{body: Buffer}} page measured anew, also when set again
     */
    set (key, page) {
      pages.delete(key)
      pages.set(key, page)
    },
    remove (key) { pages.delete(key) },
    /**
     * The page kept under `key` while `isFresh` accepts it, else one that
     * `build` makes and that is kept in its place. Concurrent callers share
     * a single build; a build that fails is not kept.
     * @param {string} key
     * @param {() => Promise<{body: Buffer}>} build
     * @param {(page: object) => Promise<boolean>} isFresh
     * @returns {Promise<object>} the page
     */
    obtain (key, build, isFresh) {
      return obtain(this, key, build, isFresh)
    }
  }
}

async function obtain (cache, key, build, isFresh) {
  const cached = cache.get(key)
  if (cached !== undefined) {
    const page = await cached.promise
    if (await isFresh(page)) return page
    // Another caller has replaced it meanwhile: take theirs.
    if (cache.get(key) !== cached) return obtain(cache, key, build, isFresh)
  }
  const entry = { promise: build(), body: EMPTY }
  cache.set(key, entry)
  try {
    const page = await entry.promise
    entry.body = page.body
    // Re-inserted so that the byte budget counts the finished page.
    if (cache.get(key) === entry) cache.set(key, entry)
    return page
  } catch (err) {
    if (cache.get(key) === entry) cache.remove(key)
    throw err
  }
}

const EMPTY = Buffer.alloc(0)

// lru-cache takes positive sizes only: a page still being built counts one byte.
function sizeOf (page) {
  return page.body.length || 1
}

module.exports = { createPageCache }
