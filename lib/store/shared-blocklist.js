'use strict'

const crypto = require('node:crypto')

// How often an instance looks whether the fleet's list changed: a block on
// one instance holds on every other within this (plus a command's time).
const POLL_MS = 500
const SET_KEY = 'blocklist'
const VERSION_KEY = 'blocklist:version'
// Set once by the first change to a store without a list: a store that
// restarted empty, or a replica promoted before it had the list, shows a
// generation (or a version) other than the one an instance last read.
const GENERATION_KEY = 'blocklist:generation'

/**
 * The console blocklist of a fleet, in the store: a set of entries and a
 * version counter that every change increments, which each instance reads
 * every POLL_MS (one GET; the set itself only when it changed). A change
 * made while the store is down is applied locally at once and sent when it
 * is back, after any change the others made meanwhile, so the last word
 * wins per entry. An instance that finds no list in the store gives it its
 * own (the `stateDirectory` file of a single machine that joins a fleet).
 * One that finds the list gone or older than what it last read (the store
 * restarted without its data, a replica behind took over) gives the store
 * its list again instead of adopting the loss: every instance does, so the
 * fleet's list comes back as the union of what the instances held.
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
    this.generation = null
    // The list as this instance holds it (the last one adopted).
    this.entries = []
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
    this.entries = entries.slice()
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
    multi.set(GENERATION_KEY, crypto.randomUUID(), 'NX')
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
      // A list kept by an earlier svr has no generation yet: without one a
      // later loss of it would go unnoticed.
      await this.store.client.set(GENERATION_KEY, crypto.randomUUID(), 'NX')
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
      let [version, generation] = await this.store.client.mget(VERSION_KEY, GENERATION_KEY)
      if (this.lost(version, generation)) {
        await this.restore()
        ;[version, generation] = await this.store.client.mget(VERSION_KEY, GENERATION_KEY)
      }
      if (version === this.version && generation === this.generation) return
      const entries = await this.store.client.smembers(SET_KEY)
      this.version = version
      this.generation = generation
      // What waits to be sent is this instance's word on those entries.
      for (const [entry, op] of this.pending) {
        const at = entries.indexOf(entry)
        if (op === 'add' && at === -1) entries.push(entry)
        if (op === 'remove' && at !== -1) entries.splice(at, 1)
      }
      this.entries = entries.sort()
      this.onChange(this.entries)
    } catch {
      // Down or slow: the next poll tries again; the store's own events log it.
    } finally {
      this.polling = false
    }
  }

  // Whether the store no longer has the list this instance last read.
  lost (version, generation) {
    if (this.generation === null) return false
    if (generation !== this.generation) return true
    return this.version !== null && (version === null || Number(version) < Number(this.version))
  }

  async restore () {
    this.log.warn('store: the fleet\'s blocklist is gone or older than this instance last read ' +
      '(a store restarted without its data, or a replica behind took over); giving it this instance\'s ' + this.entries.length + ' entries again')
    for (const entry of this.entries) if (!this.pending.has(entry)) this.pending.set(entry, 'add')
    this.generation = null
    this.version = null
    await this.flush()
  }

  stop () {
    clearInterval(this.timer)
    this.store.off('up', this.onUp)
  }
}

module.exports = { SharedBlocklist, POLL_MS }
