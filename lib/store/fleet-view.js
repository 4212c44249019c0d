'use strict'

const { version } = require('../../package.json')

// Each instance says it is alive this often, and counts as gone when it
// has not for GONE_MS.
const HEARTBEAT_MS = 5000
const GONE_MS = 30000
const MEMBERS_KEY = 'fleet:seen'

/**
 * The instances of a fleet as the store knows them: each one writes its
 * version and start time under its own key and its last heartbeat in a
 * sorted set every HEARTBEAT_MS, and reads the others' at the same time.
 * What it read last is what the status page and the metrics show (none of
 * them waits for the store).
 */
class FleetView {
  /**
   * @param {import('./fleet-store').FleetStore} store
   */
  constructor (store) {
    this.store = store
    this.started = Date.now()
    // As last read: [{instance, version, started, seen}], this one included.
    this.members = []
    this.readAt = 0
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS)
    this.timer.unref()
    this.onUp = () => this.beat()
    store.on('up', this.onUp)
  }

  async beat () {
    if (!this.store.up) return
    const { client, instance } = this.store
    const now = Date.now()
    try {
      await client.multi()
        .hset('fleet:instance:' + instance, 'version', version, 'started', this.started)
        .pexpire('fleet:instance:' + instance, GONE_MS * 2)
        .zadd(MEMBERS_KEY, now, instance)
        .zremrangebyscore(MEMBERS_KEY, '-inf', now - GONE_MS * 2)
        .exec()
      const seen = await client.zrangebyscore(MEMBERS_KEY, now - GONE_MS, '+inf', 'WITHSCORES')
      const members = []
      for (let i = 0; i < seen.length; i += 2) {
        const [memberVersion, started] = await client.hmget('fleet:instance:' + seen[i], 'version', 'started')
        members.push({ instance: seen[i], version: memberVersion ?? '?', started: Number(started) || 0, seen: Number(seen[i + 1]) })
      }
      this.members = members.sort((a, b) => a.instance.localeCompare(b.instance))
      this.readAt = now
    } catch {
      // Down or slow: the last view stays, with its time; the store's own events log the outage.
    }
  }

  /**
   * For the status page.
   * @returns {{self: string, up: boolean, readAt: number, members: object[]}}
   */
  summary () {
    return { self: this.store.instance, up: this.store.up, readAt: this.readAt, members: this.members }
  }

  stop () {
    clearInterval(this.timer)
    this.store.off('up', this.onUp)
  }
}

module.exports = { FleetView, HEARTBEAT_MS, GONE_MS }
