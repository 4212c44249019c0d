'use strict'

const { DiskStore } = require('./disk-store')
const { FillLocks } = require('./fill-locks')
const { CacheBudget } = require('./budget')
const { caches } = require('./config')

/**
 * The primary's part of the response cache, for every worker: one fill per
 * key (`cache-fill`, answered `fill`, `filled` or `failed`; `cache-filled`
 * ends it), the byte budget (sizes come with `cache-filled`, hits in
 * batches with `cache-hits`) and the eviction of what is over it, which
 * removes the file and tells every worker to drop its copy (`cache-drop`).
 * It follows the configuration in use (configure): a reload that keeps the
 * directory keeps the entries.
 */
class CacheCoordinator {
  /**
   * @param {{targets: Function, log: {warn: Function}}} coordinator
   */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.store = null
    this.budget = null
    this.locks = new FillLocks({ timeout: 5000 })
    this.settings = null
  }

  /**
   * @param {object} options runtime options
   */
  configure (options) {
    const settings = options.config.responseCache
    if (!caches(options.config)) return
    const same = this.settings !== null && this.settings.directory === settings.directory && this.settings.maxSize === settings.maxSize
    this.locks.timeout = settings.lockTimeout
    if (same) return
    this.settings = settings
    this.store = new DiskStore(settings.directory)
    this.budget = new CacheBudget({ maxSize: settings.maxSize, evict: (key) => this.drop(key) })
  }

  // An entry over the budget: its file goes, and every worker's copy.
  drop (key) {
    const { store } = this
    store.delete(key).catch((err) => this.coordinator.log.warn('response cache: cannot remove an entry: ' + err.message))
    for (const { peer } of this.coordinator.targets()) if (peer !== null) peer.notify('cache-drop', { keys: [key] })
  }

  /**
   * Remove cached answers (console `purge`): one URL, every URL under a
   * prefix (`http://host/path*`), or everything (`all`).
   * @param {string} target
   * @returns {string} what was done, for the console
   */
  purge (target) {
    if (this.budget === null) return 'purge: nothing is cached (no "cache" rule, no proxy route with "cache")'
    const match = purgeMatcher(target)
    if (match === null) return 'purge: give a URL ("http://host/path"), a prefix ending in "*", or "all"'
    let count = 0
    for (const key of [...this.budget.entries.keys()]) {
      if (!match(key)) continue
      this.budget.remove(key)
      count++
    }
    return 'purge: ' + count + ' cached answer' + (count === 1 ? '' : 's') + ' removed'
  }

  services () {
    return {
      'cache-fill': (msg, from) => {
        if (typeof msg.key !== 'string') throw new TypeError('malformed cache-fill')
        return msg.wait === false ? this.locks.tryAcquire(msg.key, from) : this.locks.acquire(msg.key, from)
      },
      'cache-filled': (msg, from) => {
        if (typeof msg.key !== 'string') return
        this.locks.release(msg.key, from, msg.stored === true)
        if (msg.stored === true && this.budget !== null && Number.isInteger(msg.size) && !this.budget.stored(msg.key, msg.size)) this.drop(msg.key)
      },
      'cache-hits': (msg) => {
        if (this.budget !== null && Array.isArray(msg.keys)) this.budget.hits(msg.keys.filter((key) => typeof key === 'string'))
      }
    }
  }
}

/**
 * @param {string} target as typed
 * @returns {((key: string) => boolean)|null} which cache keys it names
 */
function purgeMatcher (target) {
  if (target === 'all') return () => true
  const prefix = target.endsWith('*')
  let url
  try {
    url = new URL(prefix ? target.slice(0, -1) : target)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  // Keys are "GET host path?query", then the variant's fields after a newline.
  const base = 'GET ' + url.hostname.toLowerCase() + ' ' + url.pathname + url.search
  return prefix ? (key) => key.startsWith(base) : (key) => key === base || key.startsWith(base + '\n')
}

module.exports = { CacheCoordinator, purgeMatcher }
