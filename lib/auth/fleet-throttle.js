'use strict'

const { LoginThrottle, networkOf, pairKey } = require('./throttle')

// One failed-login count in the store, as LoginThrottle#count keeps it in
// memory: attempts, locks so far and the end of the current lock, the key
// forgotten `forgetMs` after its last attempt or the end of its lock.
const LOCKED = `
local function lockedFor (key, now)
  local untilMs = tonumber(redis.call('HGET', key, 'until') or '0')
  if untilMs > now then return untilMs - now end
  return 0
end
`
const COUNT = `
local function count (key, limit, now, lockMs, maxLockMs, forgetMs)
  local attempts = redis.call('HINCRBY', key, 'attempts', 1)
  local locked = 0
  if attempts > limit then
    local locks = tonumber(redis.call('HGET', key, 'locks') or '0')
    locked = math.min(lockMs * 2 ^ locks, maxLockMs)
    redis.call('HSET', key, 'locks', locks + 1, 'until', now + locked, 'attempts', math.floor(limit / 2))
  end
  local untilMs = tonumber(redis.call('HGET', key, 'until') or '0')
  redis.call('PEXPIRE', key, math.max(untilMs, now) + forgetMs - now)
  return locked
end
`

// KEYS: address, address + user. ARGV: now, addressLimit, userLimit,
// lockMs, maxLockMs, forgetMs. Returns {ms locked, what locked now: 0
// nothing new, 1 the address, 2 the user from the address}.
const ATTEMPT = LOCKED + COUNT + `
local now = tonumber(ARGV[1])
local wait = math.max(lockedFor(KEYS[1], now), lockedFor(KEYS[2], now))
if wait ~= 0 then return {wait, 0} end
local rule = {tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])}
local byAddress = count(KEYS[1], tonumber(ARGV[2]), now, rule[1], rule[2], rule[3])
if byAddress ~= 0 then return {byAddress, 1} end
local byUser = count(KEYS[2], tonumber(ARGV[3]), now, rule[1], rule[2], rule[3])
if byUser ~= 0 then
  if tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'attempts', -1) end
  return {byUser, 2}
end
return {0, 0}
`

// KEYS: address, address + user (or the address twice). ARGV: now.
const CHECK = LOCKED + `
local now = tonumber(ARGV[1])
return math.max(lockedFor(KEYS[1], now), lockedFor(KEYS[2], now))
`

// KEYS: address, address + user. ARGV: whether the attempt was counted.
const SUCCEED = `
redis.call('DEL', KEYS[2])
if ARGV[1] == '1' and tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0') > 0 then
  redis.call('HINCRBY', KEYS[1], 'attempts', -1)
end
return 0
`

// What an instance counted while the store was down, added to the fleet's
// count. KEYS: the key. ARGV: attempts, locks, until, expires (ms), now.
const MERGE = `
redis.call('HINCRBY', KEYS[1], 'attempts', tonumber(ARGV[1]))
local locks = tonumber(redis.call('HGET', KEYS[1], 'locks') or '0')
if tonumber(ARGV[2]) > locks then redis.call('HSET', KEYS[1], 'locks', ARGV[2]) end
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if tonumber(ARGV[3]) > untilMs then redis.call('HSET', KEYS[1], 'until', ARGV[3]) end
local ttl = redis.call('PTTL', KEYS[1])
local wanted = tonumber(ARGV[4]) - tonumber(ARGV[5])
if wanted > ttl then redis.call('PEXPIRE', KEYS[1], wanted) end
return 0
`

/**
 * The failed-login throttle of a fleet: LoginThrottle's rules, its counts
 * in the store, so that attempts on every instance add up and a lock on
 * one holds on all. Each count is one Lua script, atomic in the store.
 * While the store is down (or a command fails or times out) the local
 * LoginThrottle judges, and what it counted meanwhile is added to the
 * store's counts when it is back.
 */
class FleetThrottle {
  /**
   * @param {import('../store/fleet-store').FleetStore} store
   * @param {object} options LoginThrottle options (onLock, limits)
   */
  constructor (store, options) {
    this.store = store
    this.local = new LoginThrottle(options)
    this.settings = this.local.settings
    this.onLock = options.onLock || null
    const { client } = store
    client.defineCommand('svrThrottleAttempt', { numberOfKeys: 2, lua: ATTEMPT })
    client.defineCommand('svrThrottleCheck', { numberOfKeys: 2, lua: CHECK })
    client.defineCommand('svrThrottleSucceed', { numberOfKeys: 2, lua: SUCCEED })
    client.defineCommand('svrThrottleMerge', { numberOfKeys: 1, lua: MERGE })
    this.onUp = () => this.merge()
    store.on('up', this.onUp)
  }

  /** @returns {Promise<number>} seconds locked, 0: go ahead */
  async check (address, user) {
    if (!this.store.up) return this.local.check(address, user)
    const network = networkOf(address)
    try {
      const keys = keysOf(network, user)
      return toSeconds(await this.store.client.svrThrottleCheck(keys[0], keys[1], Date.now()))
    } catch {
      return this.local.check(address, user)
    }
  }

  /** @returns {Promise<number>} seconds locked, 0: the attempt may go ahead */
  async attempt (address, user) {
    if (!this.store.up) return this.local.attempt(address, user)
    const network = networkOf(address)
    const { addressLimit, userLimit, lockMs, maxLockMs, forgetMs } = this.settings
    let result
    try {
      const keys = keysOf(network, user)
      result = await this.store.client.svrThrottleAttempt(keys[0], keys[1], Date.now(), addressLimit, userLimit, lockMs, maxLockMs, forgetMs)
    } catch {
      return this.local.attempt(address, user)
    }
    const [ms, what] = result
    if (what !== 0 && this.onLock !== null) this.onLock(what === 1 ? network : 'user ' + JSON.stringify(user) + ' from ' + network, toSeconds(ms))
    return toSeconds(ms)
  }

  succeed (address, user, counted) {
    this.local.succeed(address, user, counted)
    if (!this.store.up) return
    const keys = keysOf(networkOf(address), user)
    this.store.client.svrThrottleSucceed(keys[0], keys[1], counted ? '1' : '0').catch(() => {})
  }

  // Back: the counts kept locally meanwhile join the fleet's, and the
  // local tables start over.
  async merge () {
    const now = Date.now()
    const tables = [['a:', this.local.addresses], ['p:', this.local.pairs]]
    this.local = new LoginThrottle({ ...this.settings, onLock: this.onLock })
    for (const [kind, table] of tables) {
      for (const [key, entry] of table.entries.entries()) {
        if (entry.expires <= now) continue
        await this.store.client.svrThrottleMerge('throttle:' + kind + key, entry.attempts, entry.locks, entry.lockedUntil, entry.expires, now).catch(() => {})
      }
    }
  }

  stop () {
    this.store.off('up', this.onUp)
  }
}

// The store's keys of a network and of (network, user); without a user,
// the network's twice (check() of a request without credentials).
function keysOf (network, user) {
  return ['throttle:a:' + network, user === null ? 'throttle:a:' + network : 'throttle:p:' + pairKey(network, user)]
}

function toSeconds (ms) {
  const n = Number(ms)
  return n <= 0 ? 0 : Math.ceil(n / 1000)
}

module.exports = { FleetThrottle }
