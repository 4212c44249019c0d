'use strict'

const { DiskStore } = require('./disk-store')
const { FillLocks } = require('./fill-locks')
const { CacheBudget } = require('./budget')
const { caches } = require('./config')
const { keyMatcher, purgeMatcher } = require('./purge-target')
const { cacheMetricSeries } = require('./metrics')

/**
 * The primary's part of the response cache, for every worker: one fill per
 * key (`cache-fill`, answered `fill`, `filled` or `failed`; `cache-filled`
 * ends it), the byte budget (sizes come with `cache-filled`, hits in
 * batches with `cache-hits`), the eviction of what is over it and purges
 * (the console's, `cache-purge` from a worker's PURGE request, and a
 * reload's with `purgeOnReload`), which remove the files and then tell
 * every worker to drop its copies (`cache-drop`). It follows the
 * configuration in use (configure): a reload that keeps the directory
 * keeps the entries, unless told to purge them.
 */
class CacheCoordinator {
  /**
   * @param {{targets: Function, log: {info: Function, warn: Function}}} coordinator
   */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.store = null
    this.budget = null
    // The scan of the entries already on disk (adoptEarlier), for tests and purges that follow a start.
    this.adopted = Promise.resolve()
    this.locks = new FillLocks({ timeout: 5000 })
    this.settings = null
    // Whether a route of the configuration in use caches: only then the metrics show.
    this.caching = false
    // Entries let go since the primary started, by why; kept here, since a
    // reload that changes the budget makes a new one.
    this.removed = { evicted: 0, console: 0, request: 0, reload: 0, unsafe: 0 }
    // Keys let go in this turn of the event loop, to go out in one batch.
    this.dropped = new Set()
  }

  /**
   * @param {object} options runtime options
   * @returns {Promise<void>} settles when a purge the reload asks for is done
   */
  configure (options) {
    const settings = options.config.responseCache
    this.caching = caches(options.config)
    // Only a reload finds a budget: at start this primary knows no entry yet.
    const purged = settings.purgeOnReload && this.budget !== null ? this.purgeOnReload() : Promise.resolve()
    if (!this.caching) return purged
    const same = this.settings !== null && this.settings.directory === settings.directory && this.settings.maxSize === settings.maxSize
    this.locks.timeout = settings.lockTimeout
    if (same) return purged
    this.settings = settings
    this.store = new DiskStore(settings.directory)
    this.budget = new CacheBudget({ maxSize: settings.maxSize, evict: (key, overBudget) => this.letGo(key, overBudget) })
    this.adopted = this.adoptEarlier(this.store, this.budget)
    return purged
  }

  /**
   * The entries already on disk (an earlier run of the server, or this
   * directory under another maxSize) count in the new budget, least
   * recently written first, so that they are evicted and purged like the
   * others: without this they stayed on disk beyond maxSize, out of reach
   * of every purge, and were served while fresh.
   * @returns {Promise<void>}
   */
  async adoptEarlier (store, budget) {
    let entries
    try {
      entries = await store.scan()
    } catch (err) {
      this.coordinator.log.warn('response cache: cannot read ' + store.dir + ': ' + err.message)
      return
    }
    for (const { key, size } of entries) {
      // A reload took another budget meanwhile; a key stored since is newer.
      if (this.budget !== budget) return
      if (!budget.entries.has(key) && !budget.stored(key, size)) this.drop(key)
    }
  }

  // The budget let go of an entry: evicted to make room, or purged (which
  // the purge counts itself).
  letGo (key, overBudget) {
    if (overBudget) this.removed.evicted++
    this.drop(key)
  }

  // An entry's file goes, and every worker's copy: with the others let go
  // in the same turn (a purge of thousands is one message per worker).
  drop (key) {
    this.locks.forgetStored(key)
    this.dropped.add(key)
    if (this.dropped.size === 1) queueMicrotask(() => this.flushDrops())
  }

  /**
   * @returns {Promise<void>} settles when the files are gone and the workers told
   */
  flushDrops () {
    if (this.dropped.size === 0) return Promise.resolve()
    const keys = [...this.dropped]
    this.dropped.clear()
    const { store, coordinator } = this
    const removals = keys.map((key) => store.delete(key).catch((err) => coordinator.log.warn('response cache: cannot remove an entry: ' + err.message)))
    // Files first: a worker told earlier could read a file about to go back
    // into its memory, and serve it on after the purge was answered.
    return Promise.all(removals).then(() => {
      for (const { peer } of coordinator.targets()) if (peer !== null) peer.notify('cache-drop', { keys })
    })
  }

  /**
   * Remove cached answers (console `purge`): one URL, every URL under a
   * prefix (`http://host/path*`), or everything (`all`).
   * @param {string} target
   * @returns {Promise<string>} what was done, for the console
   */
  async purge (target) {
    if (this.budget === null) return 'purge: nothing is cached (no "cache" rule, no proxy route with "cache")'
    const match = purgeMatcher(target)
    if (match === null) return 'purge: give a URL ("http://host/path"), a prefix ending in "*", or "all"'
    const count = await this.purgeKeys(match, 'console')
    return 'purge: ' + count + ' cached answer' + (count === 1 ? '' : 's') + ' removed'
  }

  /**
   * @param {(key: string) => boolean} match
   * @param {'console'|'request'|'reload'|'unsafe'} source who asked, for the metrics
   * @returns {Promise<number>} the entries removed, once their files are
   *   gone and the workers told
   */
  async purgeKeys (match, source) {
    // The entries of an earlier run are in the budget only once the
    // startup scan is over: a purge before that would miss them.
    await this.adopted
    if (this.budget === null) return 0
    let count = 0
    for (const key of [...this.budget.entries.keys()]) {
      if (!match(key)) continue
      this.budget.remove(key)
      count++
    }
    this.removed[source] += count
    await this.flushDrops()
    return count
  }

  purgeOnReload () {
    return this.purgeKeys(() => true, 'reload').then((count) => {
      this.coordinator.log.info('response cache: purgeOnReload removed ' + count + ' cached answer' + (count === 1 ? '' : 's'))
    })
  }

  /**
   * @returns {object[]} svr_cache_* series of the primary in prom-client's
   *   JSON form; none while no route caches
   */
  metrics () {
    if (!this.caching || this.budget === null) return []
    return cacheMetricSeries(this.locks.counts, this.removed, { bytes: this.budget.size, entries: this.budget.count })
  }

  services () {
    return {
      'cache-fill': (msg, from) => {
        if (typeof msg.key !== 'string') throw new TypeError('malformed cache-fill')
        return msg.wait === false ? this.locks.tryAcquire(msg.key, from) : this.locks.acquire(msg.key, from, msg.missedAt)
      },
      'cache-filled': (msg, from) => {
        if (typeof msg.key !== 'string') return
        this.locks.release(msg.key, from, msg.stored === true)
        if (msg.stored !== true || this.budget === null || !Number.isInteger(msg.size)) return
        // Alone larger than the whole budget: evicted as soon as stored.
        if (!this.budget.stored(msg.key, msg.size)) this.letGo(msg.key, true)
      },
      'cache-hits': (msg) => {
        if (this.budget !== null && Array.isArray(msg.keys)) this.budget.hits(msg.keys.filter((key) => typeof key === 'string'))
      },
      // A PURGE request a worker took (lib/pipeline/stages/cache-purge.js).
      'cache-purge': (msg) => {
        if (typeof msg.base !== 'string' || typeof msg.prefix !== 'boolean') throw new TypeError('malformed cache-purge')
        return this.budget === null ? 0 : this.purgeKeys(keyMatcher(msg.base, msg.prefix), 'request')
      },
      // A POST, PUT, DELETE or PATCH to the URL went through: what was stored of it is outdated.
      'cache-invalidate': (msg) => {
        if (typeof msg.base === 'string' && this.budget !== null) this.purgeKeys(keyMatcher(msg.base, false), 'unsafe')
      }
    }
  }
}

module.exports = { CacheCoordinator }
