'use strict'

// A highly available store: Redis Sentinel fails the store over to its
// replica under load, and svr follows without a failed request.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { skipWithout, requireTools } = require('../helpers/tools')
const { startSentinelStore } = require('../helpers/redis')

describe('a store behind Redis Sentinel', { skip: skipWithout('redis-server', 'redis-sentinel') }, () => {
  it('follows a failover of the store under load with no failed request, and writes to the new primary', async (t) => {
    requireTools(t, 'redis-server', 'redis-sentinel')
    const store = await startSentinelStore(t)
    const site = await makeSite(t, {
      workers: 2,
      metricsPath: '/metrics',
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1'],
      users: [{ name: 'alice', salt: 'x', pass: 'ab'.repeat(32) }],
      nonStandardCodes: [{ scode: 401, regex: '/^\\/secret/' }],
      store: { url: 'redis://127.0.0.1/0', sentinels: ['127.0.0.1:' + store.sentinel.port], masterName: store.masterName, commandTimeout: 200 }
    }, { 'index.html': 'index', 'secret/file.txt': 'secret' })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/store sentinel svr \(127\.0\.0\.1:\d+\) connected/)
    const agents = Array.from({ length: 4 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }))
    t.after(() => agents.forEach((agent) => agent.destroy()))
    const results = { statuses: new Map(), errors: [] }
    let running = true
    let guesses = 0
    const loops = agents.map(async (agent, i) => {
      while (running) {
        const from = '10.9.' + (++guesses >> 8 & 255) + '.' + (guesses & 255)
        try {
          const res = i % 2 === 0
            ? await request(svr.port, '/secret/file.txt', { agent, headers: { authorization: 'Basic ' + Buffer.from('alice:guess').toString('base64'), 'x-forwarded-for': from } })
            : await request(svr.port, '/', { agent })
          results.statuses.set(res.status, (results.statuses.get(res.status) || 0) + 1)
        } catch (err) {
          results.errors.push(err.code || err.message)
        }
      }
    })
    await sleep(500)
    await store.primary.stop()
    await svr.waitFor(/store sentinel svr \(127\.0\.0\.1:\d+\) lost/)
    await svr.waitFor(/store sentinel svr \(127\.0\.0\.1:\d+\) is back after \d+ s/, 30000)
    await sleep(500)
    running = false
    await Promise.all(loops)
    assert.deepEqual(results.errors, [])
    assert.deepEqual([...results.statuses.keys()].sort(), [200, 401])
    assert.match((await request(svr.port, '/metrics')).body, /\nsvr_store_up 1\n/)
    // The replica is the primary now, and what svr writes goes there.
    const keys = await store.replica.command(['KEYS svr:fleet:instance:*'])
    assert.match(keys, /svr:fleet:instance:/)
  })
})
