'use strict'

// How often an instance sends what its workers admitted to the store and
// reads what the fleet admitted: with the workers' own exchange with the
// primary (100 ms), the bound on how stale an instance's view of a key is.
const SYNC_MS = 100
// An instance's count of requests in progress that it has not repeated
// for this long is a stopped instance's.
const ACTIVE_TTL_MS = 1000
// A key nobody admitted to for this long beyond its TAT is forgotten.
const IDLE_MS = 60000

// Keys per script call: a call's arguments are spread on the stack, and a
// long call blocks the store for every other client.
const CHUNK_KEYS = 500

// One call for a chunk of the keys an instance reports. KEYS: the keys.
// ARGV: this instance, then per key: interval, count, how long ago (ms) the
// first of them was admitted, requests in progress here. Times in the store
// are the store's clock (TIME), so that instances whose clocks differ fill
// the same bucket; the TAT comes back relative to that clock's now, for the
// instance to place on its own. Per key it adds what this instance admitted
// to the fleet's bucket (as addAdmitted does, lib/traffic/bucket.js), keeps
// this instance's requests in progress, and returns the fleet's TAT less
// now (as a string: Lua numbers lose their fraction as replies) and the
// requests in progress on the other instances.
const SYNC = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local mine = 'a:' .. ARGV[1]
local out = {}
for i, key in ipairs(KEYS) do
  local at = 1 + (i - 1) * 4
  local interval = tonumber(ARGV[at + 1])
  local count = tonumber(ARGV[at + 2])
  local since = now - tonumber(ARGV[at + 3])
  local active = tonumber(ARGV[at + 4])
  local tat = tonumber(redis.call('HGET', key, 'tat') or '0')
  if interval > 0 and count > 0 then
    tat = math.max(tat, since) + count * interval
    redis.call('HSET', key, 'tat', string.format('%.3f', tat))
  end
  if active > 0 then redis.call('HSET', key, mine, active .. ':' .. now) else redis.call('HDEL', key, mine) end
  local others = 0
  local fields = redis.call('HGETALL', key)
  for j = 1, #fields, 2 do
    local field = fields[j]
    if string.sub(field, 1, 2) == 'a:' and field ~= mine then
      local n, seen = string.match(fields[j + 1], '^(%d+):(%d+)$')
      if n ~= nil and now - tonumber(seen) <= ${ACTIVE_TTL_MS} then others = others + tonumber(n) else redis.call('HDEL', key, field) end
    end
  end
  redis.call('PEXPIRE', key, math.floor(math.max(tat - now, 0)) + ${IDLE_MS})
  out[i] = {string.format('%.3f', tat - now), others}
end
return out
`

/**
 * The fleet's side of `rateLimits` in one instance's primary: what this
 * instance's workers admitted, per rule and key, goes to the store every
 * SYNC_MS in one script call, and the fleet's bucket comes back, so that
 * every instance's admissions fill the same bucket. While the store is
 * down nothing is sent or kept (what was admitted meanwhile is not owed to
 * the fleet, and nothing piles up however long the outage): each instance
 * limits on its own.
 */
class FleetBuckets {
  /**
   * @param {import('../store/fleet-store').FleetStore} store
   * @param {(ruleId: string, key: string, tat: number, othersActive: number) => void} apply the fleet's view of a key
   */
  constructor (store, apply) {
    this.store = store
    this.apply = apply
    // 'ruleId\nkey' -> {ruleId, key, interval, count, since, active}
    this.pending = new Map()
    this.syncing = false
    store.client.defineCommand('svrRateSync', { lua: SYNC })
    this.timer = setInterval(() => this.sync(), SYNC_MS)
    this.timer.unref()
  }

  /**
   * What this instance's workers reported of a key since the last sync.
   * @param {string} ruleId
   * @param {string} key
   * @param {number} interval ms per request of the rule's rate (0: connections only)
   * @param {number} count requests admitted
   * @param {number} since when the first of them was admitted
   * @param {number} active requests in progress in this instance
   */
  note (ruleId, key, interval, count, since, active) {
    const id = ruleId + '\n' + key
    const entry = this.pending.get(id)
    if (entry === undefined) {
      this.pending.set(id, { ruleId, key, interval, count, since: count > 0 ? since : Infinity, active })
      return
    }
    entry.count += count
    if (count > 0) entry.since = Math.min(entry.since, since)
    entry.active = active
  }

  async sync () {
    if (this.syncing || this.pending.size === 0) return
    if (!this.store.up) {
      this.pending.clear()
      return
    }
    this.syncing = true
    const batch = [...this.pending.values()]
    this.pending.clear()
    const chunks = []
    for (let i = 0; i < batch.length; i += CHUNK_KEYS) chunks.push(batch.slice(i, i + CHUNK_KEYS))
    // Sent together: ioredis pipelines the calls on its one connection.
    await Promise.all(chunks.map((chunk) => this.send(chunk)))
    this.syncing = false
  }

  async send (chunk) {
    const sent = Date.now()
    const keys = chunk.map((entry) => 'rate:' + entry.ruleId + '\n' + entry.key)
    const args = [this.store.instance]
    for (const entry of chunk) args.push(entry.interval, entry.count, entry.since === Infinity ? 0 : Math.max(0, sent - entry.since), entry.active)
    try {
      const answers = await this.store.client.svrRateSync(keys.length, ...keys, ...args)
      // The store's now is placed at the answer's arrival, after the script
      // ran: an instance errs by at most the call's time, to the strict side.
      const received = Date.now()
      chunk.forEach((entry, i) => this.apply(entry.ruleId, entry.key, received + Number(answers[i][0]), Number(answers[i][1])))
    } catch {
      // Down or slow: this chunk is not sent (each instance limits on its
      // own meanwhile); the store's own events log the outage.
    }
  }

  stop () {
    clearInterval(this.timer)
  }
}

module.exports = { FleetBuckets, SYNC_MS }
