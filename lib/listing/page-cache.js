'use strict'

/**
 * Rendered listings, least recently used evicted first, bounded both in
 * count and in bytes (a 10,000-entry listing is a few megabytes).
 * @param {{maxEntries: number, maxBytes: number}} limits
 */
function createPageCache ({ maxEntries, maxBytes }) {
  const pages = new Map()
  let bytes = 0

  /**
   * @param {string} key
   * @returns {object|undefined} the page, now the most recently used
   */
  function get (key) {
    const page = pages.get(key)
    if (page === undefined) return undefined
    pages.delete(key)
    pages.set(key, page)
    return page
  }

  /**
   * @param {string} key
   * @param {{body: Buffer}} page
   */
  function set (key, page) {
    remove(key)
    // One page bigger than the whole budget is served but not kept.
    if (page.body.length > maxBytes) return
    pages.set(key, page)
    bytes += page.body.length
    while (pages.size > maxEntries || bytes > maxBytes) remove(pages.keys().next().value)
  }

  function remove (key) {
    const page = pages.get(key)
    if (page === undefined) return
    pages.delete(key)
    bytes -= page.body.length
  }

  return { get, set, remove }
}

module.exports = { createPageCache }
