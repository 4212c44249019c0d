'use strict'

const { LRUCache } = require('lru-cache')
const { DiskStore } = require('./disk-store')
const { variantKey } = require('./policy')
const { caches } = require('./config')

// Hits are reported to the primary's budget in batches, this often.
const HITS_MS = 1000
// A worker waits this long beyond the lock's own timeout for the primary.
const FILL_MARGIN_MS = 1000
// Bodies up to this size are also kept in the worker's memory.
const MEMORY_ENTRY_MAX = 256 * 1024
// A URL changed by a request this worker passed on is remembered this long:
// far longer than the primary takes to remove its entries.
const INVALIDATED_MS = 60 * 1000

/**
 * The response cache as one worker sees it: entries on disk, shared by all
 * workers (lib/cache/disk-store.js), with the small ones also in this
 * worker's memory; the primary decides who fetches a missing entry
 * (`cache-fill`) and keeps the byte budget. An entry is found in two steps:
 * the request's base key (method, host, path and query) names a record of
 * the fields the answer varies on, and those fields' values in the request
 * complete the key of the entry itself.
 */
class ResponseCache {
  /**
   * @param {{directory: string, memorySize: number, lockTimeout: number}} settings `responseCache`
   * @param {import('../ipc').Peer} coordinator
   * @param {{warn: Function}} log
   */
  constructor (settings, coordinator, log) {
    this.disk = new DiskStore(settings.directory)
    this.coordinator = coordinator
    this.log = log
    this.lockTimeout = settings.lockTimeout
    this.memory = settings.memorySize === 0
      ? null
      : new LRUCache({ maxSize: settings.memorySize, sizeCalculation: (entry) => entry.body.length + 1 })
    this.varies = new LRUCache({ max: 10000 })
    // base key -> when a request changed it (invalidate).
    this.invalidated = new LRUCache({ max: 10000, ttl: INVALIDATED_MS })
    this.hits = new Set()
    this.timer = setInterval(() => this.reportHits(), HITS_MS)
    this.timer.unref()
  }

  /**
   * @param {string} base the request's base key
   * @param {object} headers the request's
   * @returns {Promise<{key: string, entry: {meta: object, body: Buffer}|null}>} the entry's key, and the entry when stored
   */
  async find (base, headers) {
    const known = this.varies.get(base)
    const found = await this.findVariant(base, headers, known === undefined ? await this.readVary(base) : known)
    // A variant not found under what this worker knew of the answer's Vary:
    // another worker may have stored an answer that varies otherwise.
    if (found.entry !== null || known === undefined) return found
    const vary = await this.readVary(base)
    return sameFields(vary, known) ? found : this.findVariant(base, headers, vary)
  }

  /**
   * find(), with an entry that cannot be read taken as none (and logged).
   * @param {string} base
   * @param {object} headers
   * @returns {Promise<{key: string, entry: {meta: object, body: Buffer}|null, at: number}>}
   */
  async lookup (base, headers) {
    // When the lookup began: a fill asked for after a miss tells the
    // primary, which knows whether the entry was stored since (fill()).
    const at = Date.now()
    try {
      const found = await this.find(base, headers)
      found.at = at
      return found
    } catch (err) {
      this.log.warn('response cache: cannot read an entry: ' + err.message)
      return { key: base, entry: null, at }
    }
  }

  // The fields the base key's answers vary on, from disk, remembered (an
  // answer without Vary has no record: remembered as none).
  async readVary (base) {
    const record = await this.disk.get(base + '\nvary')
    const vary = record === null ? [] : record.meta.vary
    this.varies.set(base, vary)
    return vary
  }

  async findVariant (base, headers, vary) {
    const key = base + variantKey(vary, headers)
    let entry = this.memory === null ? undefined : this.memory.get(key)
    // A copy in memory is used while fresh; past that, another worker may
    // have stored a newer one, which only the disk has.
    if (entry !== undefined && entry.meta.freshUntil <= Date.now()) entry = undefined
    if (entry === undefined) {
      entry = await this.disk.get(key)
      if (entry !== null && this.memory !== null && entry.body.length <= MEMORY_ENTRY_MAX) this.memory.set(key, entry)
    }
    if (entry !== null && this.invalidated.size !== 0 && entry.meta.storedAt <= (this.invalidated.get(base) ?? -1)) {
      if (this.memory !== null) this.memory.delete(key)
      entry = null
    }
    return { key, entry }
  }

  /**
   * Ask the primary whether this worker fetches the entry.
   * @param {string} key
   * @param {number} missedAt when the lookup that missed it began: an entry
   *   another worker stored since then is read, not fetched again
   * @returns {Promise<'fill'|'filled'|'failed'>}
   */
  fill (key, missedAt) {
    return this.coordinator.request('cache-fill', { key, missedAt }, { timeout: this.lockTimeout + FILL_MARGIN_MS }).then(
      (verdict) => verdict === 'filled' || verdict === 'failed' ? verdict : 'fill',
      // No primary to ask: fetch it, as if there were no other worker.
      () => 'fill')
  }

  /**
   * Ask the primary whether this worker refreshes a stale entry in the
   * background: only when no other worker is fetching it.
   * @param {string} key
   * @returns {Promise<boolean>}
   */
  tryFill (key) {
    return this.coordinator.request('cache-fill', { key, wait: false }, { timeout: FILL_MARGIN_MS }).then((verdict) => verdict === 'fill', () => false)
  }

  /**
   * Store what was fetched, and end the fill.
   * @param {string} base
   * @param {object} headers the request's
   * @param {object} meta lib/cache/policy.js EntryMeta
   * @param {Buffer} body
   * @returns {Promise<string>} the entry's key
   */
  async store (base, headers, meta, body) {
    const key = base + variantKey(meta.vary, headers)
    let size = await this.disk.put(key, meta, body)
    if (meta.vary.length !== 0) size += await this.disk.put(base + '\nvary', { vary: meta.vary }, Buffer.alloc(0))
    this.varies.set(base, meta.vary)
    if (this.memory !== null) {
      if (body.length <= MEMORY_ENTRY_MAX) this.memory.set(key, { meta, body })
      else this.memory.delete(key)
    }
    this.coordinator.notify('cache-filled', { key, stored: true, size })
    return key
  }

  /**
   * A fill that stored nothing (an answer not to keep, an upstream that failed).
   * @param {string} key the key the fill was asked for
   */
  unfilled (key) {
    this.coordinator.notify('cache-filled', { key, stored: false })
  }

  /**
   * A request that changes the resource went through (RFC 9111 4.4): every
   * entry of its URL goes. The primary removes the files and tells every
   * worker (a message each way); until then this worker takes no entry of
   * the URL stored before now, so that its next request for the URL (the
   * GET that follows a form's POST on the same connection) is not answered
   * with the old one. A request another worker answers within that round
   * trip may still get the old entry.
   * @param {string} base the URL's base key
   */
  invalidate (base) {
    this.coordinator.notify('cache-invalidate', { base })
    this.invalidated.set(base, Date.now())
    this.varies.delete(base)
  }

  /** @param {string} key served from the cache */
  hit (key) {
    this.hits.add(key)
  }

  /** @param {string[]} keys evicted or purged: not to be served from memory */
  drop (keys) {
    if (this.memory === null) return
    for (const key of keys) if (typeof key === 'string') this.memory.delete(key)
  }

  reportHits () {
    if (this.hits.size === 0) return
    this.coordinator.notify('cache-hits', { keys: [...this.hits] })
    this.hits.clear()
  }

  stop () {
    clearInterval(this.timer)
  }
}

function sameFields (a, b) {
  return a.length === b.length && a.every((name, i) => name === b[i])
}

/**
 * The response cache of a worker's pipeline: made with each pipeline, in
 * place of the previous one's; null when nothing caches.
 * @param {{responseCache: ResponseCache|null, coordinator: object, log: object}} runtime
 * @param {object} config
 * @returns {ResponseCache|null}
 */
function pipelineResponseCache (runtime, config) {
  if (runtime.responseCache !== null) runtime.responseCache.stop()
  runtime.responseCache = caches(config) ? new ResponseCache(config.responseCache, runtime.coordinator, runtime.log) : null
  return runtime.responseCache
}

module.exports = { ResponseCache, pipelineResponseCache }
