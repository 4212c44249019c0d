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
    remove (key) { pages.delete(key) }
  }
}

// lru-cache takes positive sizes only: a page still being built counts one byte.
function sizeOf (page) {
  return page.body.length || 1
}

module.exports = { createPageCache }
