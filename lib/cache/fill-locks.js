'use strict'

const { LRUCache } = require('lru-cache')

// Keys whose last store is remembered, and for how long: far longer than
// a worker takes from a lookup to its request for a fill.
const STORED_KEYS = 10000
const STORED_TTL_MS = 60 * 1000

/**
 * One fill per key for the whole server (nginx's proxy_cache_lock), kept
 * by the primary: the first worker that misses a key is told to fill it;
 * the others' misses wait until it reports the fill done (they then read
 * the entry) or gave up, or until `timeout` has passed, when the lock is
 * taken from it and the next waiter fills instead. Workers ask once per
 * miss, never per hit.
 */
class FillLocks {
  /**
   * @param {{timeout: number, setTimer?: Function, clearTimer?: Function}} options
   *   timeout: ms a fill may take before another worker may start one
   */
  constructor ({ timeout, setTimer = setTimeout, clearTimer = clearTimeout }) {
    this.timeout = timeout
    this.setTimer = setTimer
    this.clearTimer = clearTimer
    /** @type {Map<string, {holder: object, waiters: Array<{who: object, resolve: Function}>, timer: object}>} */
    this.locks = new Map()
    // Fills begun, and how they ended: stored, not stored, or taken from a
    // holder that ran out of time or went away (the metrics).
    this.counts = { started: 0, stored: 0, unstored: 0, abandoned: 0 }
    // key -> when a fill last stored it: a worker whose lookup missed the
    // key before that asks to fill it after the lock is gone.
    this.storedAt = new LRUCache({ max: STORED_KEYS, ttl: STORED_TTL_MS })
  }

  /**
   * A worker missed `key`.
   * @param {string} key
   * @param {object} who the asking worker (its Peer)
   * @param {number} [missedAt] when its lookup began: a fill that stored the
   *   key since then makes the answer 'filled', not a second fill
   * @returns {Promise<'fill'|'filled'|'failed'>} 'fill': fetch and store it;
   *   'filled': another worker just stored it, read it; 'failed': the other
   *   worker's fill failed, go to the upstream without storing
   */
  acquire (key, who, missedAt) {
    const lock = this.locks.get(key)
    if (lock === undefined && typeof missedAt === 'number' && (this.storedAt.get(key) ?? -Infinity) >= missedAt) return Promise.resolve('filled')
    if (lock === undefined) {
      this.hold(key, who, [])
      return Promise.resolve('fill')
    }
    return new Promise((resolve) => lock.waiters.push({ who, resolve }))
  }

  /**
   * A worker found `key` stale but still good to serve: it fetches it in
   * the background only if nobody else is.
   * @param {string} key
   * @param {object} who
   * @returns {'fill'|'busy'}
   */
  tryAcquire (key, who) {
    if (this.locks.has(key)) return 'busy'
    this.hold(key, who, [])
    return 'fill'
  }

  /**
   * The holder's fill is over.
   * @param {string} key
   * @param {object} who
   * @param {boolean} stored whether the entry is now in the store
   */
  release (key, who, stored) {
    const lock = this.locks.get(key)
    if (lock === undefined || lock.holder !== who) return
    this.clearTimer(lock.timer)
    this.locks.delete(key)
    this.counts[stored ? 'stored' : 'unstored']++
    if (stored) this.storedAt.set(key, Date.now())
    for (const { resolve } of lock.waiters) resolve(stored ? 'filled' : 'failed')
  }

  /**
   * A worker is gone: its fills are over, unstored, and its waits with it.
   * @param {object} who
   */
  forget (who) {
    for (const [key, lock] of this.locks) {
      lock.waiters = lock.waiters.filter((waiter) => waiter.who !== who)
      if (lock.holder === who) this.handOver(key, lock)
    }
  }

  hold (key, who, waiters) {
    this.counts.started++
    const lock = { holder: who, waiters, timer: null }
    lock.timer = this.setTimer(() => this.handOver(key, lock), this.timeout)
    if (typeof lock.timer.unref === 'function') lock.timer.unref()
    this.locks.set(key, lock)
  }

  // The holder took too long (or left): the first waiter fills instead;
  // the others wait on it.
  handOver (key, lock) {
    this.clearTimer(lock.timer)
    this.locks.delete(key)
    this.counts.abandoned++
    const [next, ...rest] = lock.waiters
    if (next === undefined) return
    this.hold(key, next.who, rest)
    next.resolve('fill')
  }

  /**
   * An entry is gone (purged, evicted): a later miss fills it again.
   * @param {string} key
   */
  forgetStored (key) {
    this.storedAt.delete(key)
  }
}

module.exports = { FillLocks }
