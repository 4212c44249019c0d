'use strict'

// The fleet's rate-limit buckets in a real redis-server
// (lib/traffic/fleet-buckets.js): times in the store's clock, however many
// keys an instance reports, and nothing kept while the store is down.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { FleetStore } = require('../../lib/store/fleet-store')
const { FleetBuckets } = require('../../lib/traffic/fleet-buckets')
const { skipWithout, requireTools } = require('../helpers/tools')
const { startRedis } = require('../helpers/redis')
const { waitUntil } = require('../helpers/wait')

const INTERVAL_MS = 100

// A command has 5 s: a sync of 30,000 keys is 60 calls pipelined on one
// connection, and on a loaded CI machine (Node 24, 2026-11-30) the last
// ones took longer than 900 ms, which drops them as a slow store's.
async function openStore (t, redis) {
  const settings = { url: redis.url, passwordFile: null, ca: null, keyFile: null, prefix: 'svr:', sentinels: [], masterName: null, commandTimeout: 5000 }
  const store = new FleetStore(settings, { password: null, ca: null, key: null }, { info () {}, warn () {} })
  t.after(() => store.stop())
  await waitUntil(async () => store.up, 'the store did not connect')
  return store
}

function instance (t, store) {
  const seen = new Map()
  const buckets = new FleetBuckets(store, (ruleId, key, tat, others) => seen.set(ruleId + ' ' + key, { tat, others }))
  t.after(() => buckets.stop())
  return { buckets, seen }
}

describe('the fleet\'s rate-limit buckets', { skip: skipWithout('redis-server') }, () => {
  it('fills one bucket from two instances, whatever their clocks say', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t)
    const a = instance(t, await openStore(t, redis))
    const b = instance(t, await openStore(t, redis))
    const now = Date.now()
    a.buckets.note('r', 'k', INTERVAL_MS, 10, now, 1)
    await a.buckets.sync()
    // B's clock runs an hour ahead: what it reports is still placed by how long ago it was.
    const realNow = Date.now
    Date.now = () => realNow() + 3600 * 1000
    try {
      b.buckets.note('r', 'k', INTERVAL_MS, 10, Date.now(), 2)
      await b.buckets.sync()
    } finally {
      Date.now = realNow
    }
    const fromA = a.seen.get('r k')
    const fromB = b.seen.get('r k')
    // 10 requests at 100 ms: a TAT 1 s ahead after A, 2 s after both, on each instance's own clock.
    assert.ok(Math.abs(fromA.tat - (now + 1000)) < 200, 'A: ' + (fromA.tat - now))
    assert.ok(Math.abs(fromB.tat - (realNow() + 3600 * 1000 + 2000)) < 300, 'B: ' + (fromB.tat - realNow() - 3600 * 1000))
    assert.equal(fromB.others, 1)
  })

  it('sends thousands of keys in one sync, and keeps nothing while the store is down', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t)
    const store = await openStore(t, redis)
    const { buckets, seen } = instance(t, store)
    const keys = 30000
    for (let i = 0; i < keys; i++) buckets.note('r', 'k' + i, INTERVAL_MS, 1, Date.now(), 0)
    await buckets.sync()
    assert.equal(seen.size, keys)
    await redis.stop()
    await waitUntil(async () => !store.up, 'the store was not seen down')
    for (let i = 0; i < 1000; i++) buckets.note('r', 'down' + i, INTERVAL_MS, 1, Date.now(), 0)
    await buckets.sync()
    assert.equal(buckets.pending.size, 0)
  })
})
