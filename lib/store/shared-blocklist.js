'use strict'

// How often an instance looks whether the fleet's list changed: a block on
// one instance holds on every other within this (plus a command's time).
const POLL_MS = 500
const SET_KEY = 'blocklist'
const VERSION_KEY = 'blocklist:version'

/**
 * The console blocklist of a fleet, in the store: a set of entries and a
 * version counter that every change increments, which each instance reads
 * every POLL_MS (one GET; the set itself only when it changed). A change
 * made while the store is down is applied locally at once and sent when it
 * is back, after any change the others made meanwhile, so the last word
 * wins per entry. An instance that finds no list in the store gives it its
 * own (the `stateDirectory` file of a single machine that joins a fleet).
 */
class SharedBlocklist {
  /**
   * @param {import('./fleet-store').FleetStore} store
   * @param {(entries: string[]) => void} onChange the fleet's list, when it differs from the last one seen
   * @param {{warn: Function}} log
   */
  constructor (store, onChange, log) {
    this.store = store
    this.onChange = onChange
    this.log = log
    this.version = null
    // Changes not yet in the store: entry -> 'add' or 'remove'.
    this.pending = new Map()
    this.seed = []
    this.polling = false
    this.timer = setInterval(() => this.poll(), POLL_MS)
    this.timer.unref()
    this.onUp = () => this.sync()
    store.on('up', this.onUp)
  }

  /**
   * @param {string[]} entries the instance's own list (its state file), for a store that has none
   */
  start (entries) {
    this.seed = entries.slice()
    if (this.store.up) this.sync()
  }

  /**
   * Send a change made here to the fleet.
   * @param {'add'|'remove'} op
   * @param {string[]} entries
   * @returns {Promise<boolean>} whether the store has it (false: sent once it is back)
   */
  async change (op, entries) {
    for (const entry of entries) this.pending.set(entry, op)
    if (!this.store.up) return false
    try {
      await this.flush()
      return true
    } catch (err) {
      this.log.warn('store: cannot send a blocklist change (' + (err.code || err.message) + '); it is sent when the store answers again')
      return false
    }
  }

  // The changes made here and not yet in the store, in one transaction.
  async flush () {
    if (this.pending.size === 0) return
    const changes = [...this.pending]
    const multi = this.store.client.multi()
    for (const [entry, op] of changes) {
      if (op === 'add') multi.sadd(SET_KEY, entry)
      else multi.srem(SET_KEY, entry)
    }
    multi.incr(VERSION_KEY)
    await multi.exec()
    // A change made again meanwhile stays pending.
    for (const [entry, op] of changes) if (this.pending.get(entry) === op) this.pending.delete(entry)
  }

  // The store is (back) up: seed it, send what waited, read the list.
  async sync () {
    try {
      if (this.seed.length !== 0 && (await this.store.client.exists(VERSION_KEY)) === 0) {
        for (const entry of this.seed) if (!this.pending.has(entry)) this.pending.set(entry, 'add')
      }
      this.seed = []
      await this.flush()
      await this.poll()
    } catch (err) {
      this.log.warn('store: cannot bring the blocklist up to date (' + (err.code || err.message) + ')')
    }
  }

  async poll () {
    if (!this.store.up || this.polling) return
    this.polling = true
    try {
      const version = await this.store.client.get(VERSION_KEY)
      if (version === this.version) return
      const entries = await this.store.client.smembers(SET_KEY)
      this.version = version
      // What waits to be sent is this instance's word on those entries.
      for (const [entry, op] of this.pending) {
        const at = entries.indexOf(entry)
        if (op === 'add' && at === -1) entries.push(entry)
        if (op === 'remove' && at !== -1) entries.splice(at, 1)
      }
      this.onChange(entries.sort())
    } catch {
      // Down or slow: the next poll tries again; the store's own events log it.
    } finally {
      this.polling = false
    }
  }

  stop () {
    clearInterval(this.timer)
    this.store.off('up', this.onUp)
  }
}

module.exports = { SharedBlocklist, POLL_MS }
