'use strict'

const crypto = require('node:crypto')
const net = require('node:net')
const { LRUCache } = require('lru-cache')

const DEFAULTS = Object.freeze({
  // Failed logins from one address, over every user name, before it is
  // locked: the guard against trying many accounts (SVR.JS: 10 per IP).
  addressLimit: 10,
  // Failed logins for one user name from one address: the guard against
  // guessing one account, tighter because a person mistyping retries only
  // a few times.
  userLimit: 5,
  lockMs: 5 * 60 * 1000,
  maxLockMs: 60 * 60 * 1000,
  // A counter without an attempt (or a lock) for this long starts over.
  forgetMs: 15 * 60 * 1000,
  // Per table: the throttle never holds more than this many keys.
  maxKeys: 10000
})
// Longer names are keyed by their hash, so a flood of huge names cannot
// make the tables large in bytes either.
const MAX_NAME_KEY = 128
const LEADING_ZEROS = /^0+(?=.)/

/**
 * The failed-login throttle, kept by the cluster primary for
 * every worker (or in-process with --single-threaded). Login attempts are
 * counted per client address and per (address, user name): a guessing
 * flood locks the address, or that name from that address, while the same
 * user logging in from anywhere else is not affected. A lock lasts
 * `lockMs`, doubling with each further lock of the same key up to
 * `maxLockMs`; after a lock, half the limit of new attempts locks again, as
 * in SVR.JS. A success clears the (address, user) counter but only gives
 * its own attempt back to the address, so logging in to one's own account
 * does not buy more guesses at others. IPv6 clients are counted per /64,
 * the block one subscriber usually gets. Both tables are bounded lru-cache
 * tables whose entries expire.
 */
class LoginThrottle {
  /**
   * @param {{addressLimit?: number, userLimit?: number, lockMs?: number,
   *   maxLockMs?: number, forgetMs?: number, maxKeys?: number,
   *   now?: () => number, onLock?: (what: string, seconds: number) => void}} [options]
   */
  constructor (options = {}) {
    const settings = { ...DEFAULTS, ...options }
    this.settings = settings
    this.now = options.now || Date.now
    this.onLock = options.onLock || null
    this.addresses = new ExpiringTable(settings.maxKeys, this.now)
    this.pairs = new ExpiringTable(settings.maxKeys, this.now)
  }

  /**
   * @param {string} address client address
   * @param {string|null} user the name tried, or null without credentials
   * @returns {number} seconds until the lock ends, 0 when not locked
   */
  check (address, user) {
    const now = this.now()
    const network = networkOf(address)
    let wait = this.addresses.lockedFor(network, now)
    if (user !== null) wait = Math.max(wait, this.pairs.lockedFor(pairKey(network, user), now))
    return toSeconds(wait)
  }

  /**
   * Count a login attempt before its password is checked, so that a burst
   * of parallel guesses cannot all pass before the first failure is on
   * record. The attempt that goes over a limit starts the lock and is
   * refused itself.
   * @param {string} address
   * @param {string} user the name tried
   * @returns {number} seconds until the lock ends, 0 when the attempt may go ahead
   */
  attempt (address, user) {
    const now = this.now()
    const network = networkOf(address)
    const pair = pairKey(network, user)
    const wait = Math.max(this.addresses.lockedFor(network, now), this.pairs.lockedFor(pair, now))
    if (wait !== 0) return toSeconds(wait)
    const byAddress = this.count(this.addresses, network, this.settings.addressLimit, now)
    if (byAddress !== 0) {
      this.reportLock(network, byAddress)
      return toSeconds(byAddress)
    }
    const byUser = this.count(this.pairs, pair, this.settings.userLimit, now)
    if (byUser !== 0) {
      // Refused: it does not count against the address either.
      this.refund(network, now)
      this.reportLock('user ' + JSON.stringify(user) + ' from ' + network, byUser)
    }
    return toSeconds(byUser)
  }

  /**
   * A successful login clears its (address, user) counter and gives its
   * attempt, if it was counted, back to the address.
   * @param {string} address
   * @param {string} user
   * @param {boolean} [counted] whether attempt() counted this login
   */
  succeed (address, user, counted = true) {
    const network = networkOf(address)
    this.pairs.delete(pairKey(network, user))
    if (counted) this.refund(network, this.now())
  }

  refund (network, now) {
    const entry = this.addresses.get(network, now)
    if (entry !== undefined && entry.attempts > 0) entry.attempts--
  }

  count (table, key, limit, now) {
    const { lockMs, maxLockMs, forgetMs } = this.settings
    let entry = table.get(key, now)
    if (entry === undefined) entry = { attempts: 0, locks: 0, lockedUntil: 0, expires: 0 }
    entry.attempts++
    let locked = 0
    if (entry.attempts > limit) {
      locked = Math.min(lockMs * 2 ** entry.locks, maxLockMs)
      entry.locks++
      entry.lockedUntil = now + locked
      entry.attempts = Math.floor(limit / 2)
    }
    entry.expires = Math.max(entry.lockedUntil, now) + forgetMs
    table.set(key, entry, now)
    return locked
  }

  reportLock (what, ms) {
    if (this.onLock !== null) this.onLock(what, toSeconds(ms))
  }

  /** @returns {number} keys held in both tables */
  get size () {
    return this.addresses.size + this.pairs.size
  }
}

/**
 * One of the throttle's tables: lru-cache, bounded by `max` keys (a key is
 * an address and at most MAX_NAME_KEY characters of name, so the count is
 * the memory budget), each entry expiring at its own `expires` on the
 * throttle's clock. Reads peek, so only a new failure makes a key recent,
 * and past the cap the least recently failed key goes. lru-cache keeps an
 * entry until `expires` inclusive; the throttle forgets it at `expires`,
 * so reads check that too.
 */
class ExpiringTable {
  /**
   * @param {number} max keys at most
   * @param {() => number} now the throttle's clock
   */
  constructor (max, now) {
    this.now = now
    this.entries = new LRUCache({ max, perf: { now }, ttlResolution: 0 })
  }

  get (key, now) {
    const entry = this.entries.peek(key)
    return entry !== undefined && entry.expires > now ? entry : undefined
  }

  lockedFor (key, now) {
    const entry = this.get(key, now)
    return entry === undefined || entry.lockedUntil <= now ? 0 : entry.lockedUntil - now
  }

  set (key, entry, now) {
    this.entries.set(key, entry, { ttl: entry.expires - now })
  }

  delete (key) {
    this.entries.delete(key)
  }

  /** @returns {number} live keys (a full scan: for tests and diagnostics) */
  get size () {
    this.entries.purgeStale()
    const now = this.now()
    let live = 0
    for (const entry of this.entries.values()) if (entry.expires > now) live++
    return live
  }
}

function pairKey (network, user) {
  const name = user.length > MAX_NAME_KEY
    ? '#' + crypto.createHash('sha256').update(user).digest('base64')
    : user
  // An address never contains a newline, so the key cannot be ambiguous.
  return network + '\n' + name
}

/**
 * @param {string} address an IPv4 or IPv6 address
 * @returns {string} IPv4 unchanged; IPv6 as its /64 prefix ("2001:db8:0:1::/64")
 */
function networkOf (address) {
  if (net.isIPv6(address) === false) return address
  const groups = expandIPv6(address)
  return groups === null ? address : groups.slice(0, 4).join(':') + '::/64'
}

// "2001:db8::1" -> ['2001', 'db8', '0', '0', '0', '0', '0', '1'], with a
// trailing dotted IPv4 part counted as two groups; null when malformed.
function expandIPv6 (address) {
  const zone = address.indexOf('%')
  const plain = (zone === -1 ? address : address.slice(0, zone)).toLowerCase()
  const halves = plain.split('::')
  if (halves.length > 2) return null
  const head = halves[0] === '' ? [] : halves[0].split(':')
  const tail = halves.length === 1 || halves[1] === '' ? [] : halves[1].split(':')
  const groups = head.concat(halves.length === 2 ? fill(8 - head.length - groupCount(tail)) : [], tail)
  return groups.map(trimGroup)
}

function groupCount (groups) {
  return groups.length !== 0 && groups[groups.length - 1].includes('.') ? groups.length + 1 : groups.length
}

function fill (n) {
  return n > 0 ? new Array(n).fill('0') : []
}

function trimGroup (group) {
  return group.includes('.') ? group : group.replace(LEADING_ZEROS, '')
}

function toSeconds (ms) {
  return ms <= 0 ? 0 : Math.ceil(ms / 1000)
}

module.exports = { LoginThrottle, networkOf, pairKey, DEFAULTS }
