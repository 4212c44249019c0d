'use strict'

const crypto = require('node:crypto')

// The fleet's ticket keys change this often: a ticket is accepted by every
// instance until its period ends (a client then makes one full handshake).
const PERIOD_MS = 12 * 60 * 60 * 1000
// How often an instance looks whether a new period's keys are out.
const CHECK_MS = 60 * 1000
// A period's keys are made at the earliest when it starts and are not
// needed after it ends: nothing keeps them in the store longer.
const KEYS_TTL_MS = PERIOD_MS + 2 * CHECK_MS

/**
 * TLS session ticket keys shared by the instances of a fleet through the
 * store, so that a client that resumes its session on any instance does
 * not need a full handshake. Keys belong to a period of PERIOD_MS: the
 * first instance to need a period's keys makes them (SET NX), every other
 * takes those. While the store is down an instance keeps the keys it has.
 * Session tickets are encrypted with these keys: they are as secret as the
 * certificates' keys, and are sealed with `store.keyFile` like those
 * (lib/store/sealing.js); without it the store must be kept as private.
 */
class FleetTicketKeys {
  /**
   * @param {import('../store/fleet-store').FleetStore} store
   * @param {(keys: string) => void} onKeys new keys (base64, 48 bytes) for every worker
   * @param {{info: Function, warn: Function}} log
   */
  constructor (store, onKeys, log) {
    this.store = store
    this.onKeys = onKeys
    this.log = log
    this.current = null
    // The stored value last refused, so that it is logged once.
    this.refused = null
    this.timer = setInterval(() => this.check(), CHECK_MS)
    this.timer.unref()
    this.onUp = () => this.check()
    store.on('up', this.onUp)
    if (store.up) this.check()
  }

  async check () {
    if (!this.store.up) return
    const period = Math.floor(Date.now() / PERIOD_MS)
    const key = 'tls:ticket-keys:' + period
    try {
      const { client, sealer } = this.store
      await client.set(key, sealer.seal(crypto.randomBytes(48).toString('base64'), key), 'PX', KEYS_TTL_MS, 'NX')
      const keys = this.open(await client.get(key), key)
      if (keys === null || keys === this.current) return
      this.current = keys
      this.log.info('TLS session tickets: the fleet\'s keys of this period, until ' + new Date((period + 1) * PERIOD_MS).toISOString())
      this.onKeys(keys)
    } catch {
      // Down or slow: the keys in use stay; the next check tries again.
    }
  }

  // The period's keys, or null (logged once) when they cannot be used here.
  open (value, key) {
    if (typeof value !== 'string') return null
    let keys
    try {
      keys = this.store.sealer.open(value, key)
      if (Buffer.from(keys, 'base64').length !== 48) throw new Error('they are not 48 bytes in base64')
    } catch (err) {
      if (this.refused !== value) this.log.warn('TLS session tickets: the fleet\'s keys in the store cannot be used (' + err.message + '); this instance keeps its own')
      this.refused = value
      return null
    }
    return keys
  }

  stop () {
    clearInterval(this.timer)
    this.store.off('up', this.onUp)
  }
}

/**
 * Keep the workers' ticket keys the fleet's from now on.
 * @param {import('../store/fleet-store').FleetStore} store
 * @param {(keys: string) => void} onKeys
 * @param {{info: Function, warn: Function}} log
 * @returns {FleetTicketKeys}
 */
function shareTicketKeys (store, onKeys, log) {
  return new FleetTicketKeys(store, onKeys, log)
}

module.exports = { FleetTicketKeys, shareTicketKeys, PERIOD_MS }
