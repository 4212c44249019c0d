'use strict'

const { LRUCache } = require('lru-cache')

/**
 * The response cache's byte budget, kept by the primary for the whole
 * server: every entry a worker stores is reported with its size, hits are
 * reported in batches, and when the entries on disk add up to more than
 * `maxSize`, the least recently used are evicted (`evict` removes their
 * files and tells the workers).
 */
class CacheBudget {
  /**
   * @param {{maxSize: number, evict: (key: string, overBudget: boolean) => void}} options
   *   evict: an entry is let go, `overBudget` when to make room (else purged)
   */
  constructor ({ maxSize, evict }) {
    this.maxSize = maxSize
    this.entries = new LRUCache({
      maxSize,
      sizeCalculation: (size) => size,
      // An entry larger than the whole budget is not kept at all.
      maxEntrySize: maxSize,
      dispose: (size, key, reason) => {
        // A key stored again ('set') replaces its entry in place: nothing to remove.
        if (reason === 'evict' || reason === 'delete') evict(key, reason === 'evict')
      }
    })
  }

  /**
   * A worker stored an entry.
   * @param {string} key
   * @param {number} size bytes on disk
   * @returns {boolean} false when it alone is over the budget: it is not
   *   kept, and its file is the caller's to remove
   */
  stored (key, size) {
    if (size > this.maxSize) {
      this.entries.delete(key)
      return false
    }
    this.entries.set(key, size)
    return true
  }

  /**
   * Workers served these keys: they are the most recently used.
   * @param {string[]} keys
   */
  hits (keys) {
    for (const key of keys) this.entries.get(key)
  }

  /**
   * An entry was purged or found expired: its file goes.
   * @param {string} key
   */
  remove (key) {
    this.entries.delete(key)
  }

  /** @returns {number} bytes of the entries kept */
  get size () {
    return this.entries.calculatedSize
  }

  /** @returns {number} entries kept */
  get count () {
    return this.entries.size
  }
}

module.exports = { CacheBudget }
