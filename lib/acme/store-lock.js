'use strict'

const { once } = require('node:events')

// Only the owner may push the expiry on or let go: a holder that stalled
// past its expiry must not extend or remove the lock another took since.
const REFRESH = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`
// At start the store connects in the background while the stored
// certificates load: the first lock is worth waiting this long for.
const CONNECT_WAIT_MS = 3000

/**
 * The order lock of a name in the fleet's store: a key holding its owner,
 * made with SET NX PX so that one instance of the fleet orders at a time,
 * and expiring on its own when its holder dies (no stale lock to remove).
 * The holder pushes the expiry on while it works. While the store is down
 * nobody gets it: no instance orders without it.
 */
class StoreLock {
  /**
   * @param {import('../store/fleet-store').FleetStore} store
   * @param {string} key the lock's key
   * @param {string} owner who we are
   * @param {number} ttl ms a lock lasts unless refreshed
   */
  constructor (store, key, owner, ttl) {
    this.store = store
    this.key = key
    this.owner = owner
    this.ttl = ttl
    this.refresher = null
    defineScripts(store.client)
  }

  /**
   * @returns {Promise<{acquired: true}|{acquired: false, holder: {owner: string, expires: number}}|{acquired: false, unavailable: string}>}
   *   unavailable: why the store cannot say (down, failed)
   */
  async acquire () {
    if (!this.store.up && !(await this.connected())) return { acquired: false, unavailable: 'the store is down' }
    try {
      const { client } = this.store
      if (await client.set(this.key, this.owner, 'PX', this.ttl, 'NX') === 'OK') return this.held()
      const [owner, left] = await Promise.all([client.get(this.key), client.pttl(this.key)])
      // Ours already: an earlier SET whose reply timed out was applied.
      if (owner === this.owner && await client.svrAcmeLockRefresh(this.key, this.owner, this.ttl) === 1) return this.held()
      // Released in between: the next poll takes it.
      if (owner === null) return { acquired: false, holder: { owner: 'nobody (just released)', expires: Date.now() } }
      return { acquired: false, holder: { owner, expires: Date.now() + Math.max(0, left) } }
    } catch (err) {
      return { acquired: false, unavailable: 'the store did not answer (' + (err.code || err.message) + ')' }
    }
  }

  held () {
    // A third of the lifetime: two refreshes may fail before it expires.
    clearInterval(this.refresher)
    this.refresher = setInterval(() => this.refresh(), Math.max(1000, Math.floor(this.ttl / 3)))
    this.refresher.unref()
    return { acquired: true }
  }

  async connected () {
    const timeout = AbortSignal.timeout(CONNECT_WAIT_MS)
    return once(this.store, 'up', { signal: timeout }).then(() => true, () => false)
  }

  // A refresh that finds the lock gone or another's means it expired while
  // the store did not answer: said once, as another instance may order too.
  async refresh () {
    const kept = await this.store.client.svrAcmeLockRefresh(this.key, this.owner, this.ttl).catch(() => null)
    if (kept !== 0 || this.refresher === null) return
    clearInterval(this.refresher)
    this.refresher = null
    this.store.log.warn('acme: lost the order lock ' + this.key + ' (it expired while the store did not answer); another instance may order the same name meanwhile')
  }

  /**
   * Remove the lock if it is still ours.
   * @returns {Promise<void>}
   */
  async release () {
    clearInterval(this.refresher)
    this.refresher = null
    await this.store.client.svrAcmeLockRelease(this.key, this.owner)
  }
}

function defineScripts (client) {
  if (typeof client.svrAcmeLockRefresh === 'function') return
  client.defineCommand('svrAcmeLockRefresh', { numberOfKeys: 1, lua: REFRESH })
  client.defineCommand('svrAcmeLockRelease', { numberOfKeys: 1, lua: RELEASE })
}

module.exports = { StoreLock }
