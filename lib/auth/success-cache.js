'use strict'

const crypto = require('node:crypto')
const { LRUCache } = require('lru-cache')

const DEFAULT_TTL_MS = 5 * 60 * 1000
const DEFAULT_MAX_ENTRIES = 1000

/**
 * Recently verified (name, password) pairs of one worker, so that a browser,
 * which sends its credentials with every request, does not cost a scrypt
 * run per image. Only successes are kept, so a guess gains nothing from it;
 * entries are keyed by an HMAC under a key that lives only in this process
 * (SVR.JS cached slow hashes for an hour under a plain SHA-256 of the
 * password, which a leaked memory dump turns back into cheap guesses). The cache belongs to one pipeline: a reload, which may
 * change passwords, starts an empty one.
 */
class SuccessCache {
  /**
   * @param {{ttl?: number, max?: number, now?: () => number}} [options]
   */
  constructor ({ ttl = DEFAULT_TTL_MS, max = DEFAULT_MAX_ENTRIES, now = Date.now } = {}) {
    this.ttl = ttl
    this.max = max
    this.now = now
    this.secret = crypto.randomBytes(32)
    // lru-cache bounds the count (the least recently added out first) and
    // ages entries on `now`'s clock; values are their expiry times, since
    // lru-cache keeps an entry until its ttl inclusive and a success is
    // forgotten at `ttl`.
    this.entries = new LRUCache({ max, ttl, perf: { now }, ttlResolution: 0 })
  }

  key (name, password) {
    return crypto.createHmac('sha256', this.secret).update(name).update('\0').update(password).digest('base64')
  }

  /**
   * @param {string} key from key()
   * @returns {boolean} whether this pair was verified within the last ttl ms
   */
  has (key) {
    const expires = this.entries.peek(key)
    if (expires === undefined) return false
    if (expires > this.now()) return true
    this.entries.delete(key)
    return false
  }

  /**
   * @param {string} key from key()
   */
  add (key) {
    this.entries.set(key, this.now() + this.ttl)
  }

  get size () {
    return this.entries.size
  }
}

module.exports = { SuccessCache }
