'use strict'

// Two svr instances that share one real redis-server (`store`): the login
// throttle and the console blocklist hold for the fleet, and each instance
// acts on its own while the store is down.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const http = require('node:http')
const { makeSite, startSvr } = require('../helpers/server')
const { startSvrOnTty } = require('../helpers/tty')
const { request } = require('../helpers/http')
const { freePort, skipWithout, requireTools } = require('../helpers/tools')
const { startRedis } = require('../helpers/redis')
const { waitUntil } = require('../helpers/wait')

const PASSWORD = 'store-secret-' + crypto.randomBytes(4).toString('hex')

function userRecord (name, password) {
  const salt = crypto.randomBytes(16).toString('hex')
  return { name, salt, pass: crypto.createHash('sha256').update(password + salt).digest('hex') }
}

/** One instance of the fleet: its own directory and port, the shared store. */
async function instance (t, redis, config = {}, { tty = false } = {}) {
  const port = await freePort()
  const site = await makeSite(t, {
    port: '127.0.0.1:' + port,
    workers: 1,
    metricsPath: '/metrics',
    allowStatus: true,
    enableIPSpoofing: true,
    trustedProxies: ['127.0.0.1'],
    users: [userRecord('alice', 'alice-pw'), userRecord('bob', 'bob-pw')],
    nonStandardCodes: [{ scode: 401, regex: '/^\\/secret/' }],
    store: { url: redis.url, passwordFile: 'store-password' },
    ...config
  }, { 'index.html': 'index', 'secret/file.txt': 'secret' })
  await fs.writeFile(path.join(site.dir, 'store-password'), redis.password + '\n', { mode: 0o600 })
  const svr = tty ? await startSvrOnTty(t, site.configFile) : await startSvr(t, site.configFile)
  await svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ connected/)
  return { svr, port, dir: site.dir }
}

function basic (name, password) {
  return 'Basic ' + Buffer.from(name + ':' + password).toString('base64')
}

function login (port, address, password, user = 'alice') {
  return request(port, '/secret/file.txt', { headers: { 'x-forwarded-for': address, authorization: basic(user, password) }, agent: false })
}

describe('the fleet\'s store', { skip: skipWithout('redis-server', 'script') }, () => {
  it('locks a guessed account after the fleet\'s attempts in total, not each instance\'s', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t, { password: PASSWORD })
    const a = await instance(t, redis)
    const b = await instance(t, redis)
    const statuses = []
    // Five failures for one user from one address are allowed (userLimit),
    // alternating between the instances as a round-robin balancer would.
    for (let i = 0; i < 8; i++) statuses.push((await login(i % 2 === 0 ? a.port : b.port, '203.0.113.7', 'guess' + i)).status)
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429])
    // Locked on both, the right password too; another address is not.
    assert.deepEqual([(await login(a.port, '203.0.113.7', 'alice-pw')).status, (await login(b.port, '203.0.113.7', 'alice-pw')).status], [429, 429])
    assert.equal((await login(b.port, '203.0.113.8', 'alice-pw')).status, 200)
    // The refused attempt that locked alice did not count against the
    // address (10 failures): five more, for bob, are still judged, and the
    // address locks at the eleventh failure.
    const bob = []
    for (let i = 0; i < 6; i++) bob.push((await login(i % 2 === 0 ? b.port : a.port, '203.0.113.7', 'guess' + i, 'bob')).status)
    assert.deepEqual(bob, [401, 401, 401, 401, 401, 429])
    // The secret is not in what svr printed.
    assert.equal(a.svr.output.includes(PASSWORD), false)
    assert.match((await request(a.port, '/metrics')).body, /\nsvr_store_up 1\n/)
    // Each sees both in the fleet (heartbeats every 5 s), on the status page and in the metrics.
    await waitUntil(async () => /\nsvr_fleet_instances 2\n/.test((await request(a.port, '/metrics')).body), 'A sees two instances', 12000)
    const version = require('../../package.json').version
    const status = (await request(b.port, '/svrjsstatus.svr')).body
    const rows = [...status.matchAll(/<tr( class="self")?><td>([^<]+)<\/td><td>([^<]+)<\/td>/g)].filter((row) => row[3] === version)
    assert.deepEqual(rows.map((row) => [Boolean(row[1]), row[2].endsWith(' (this one)')]).sort(), [[false, false], [true, true]])
    assert.equal(status.includes(PASSWORD), false)
  })

  it('applies a block made on one instance on the other within a second, and both ways', async (t) => {
    requireTools(t, 'redis-server', 'script')
    const redis = await startRedis(t, { password: PASSWORD })
    const a = await instance(t, redis, {}, { tty: true })
    const b = await instance(t, redis)
    assert.equal((await request(b.port, '/')).status, 200)
    a.svr.type('block 127.0.0.1')
    await a.svr.waitFor(/blocked: 127\.0\.0\.1/)
    const blockedAt = Date.now()
    await waitUntil(async () => (await request(b.port, '/')).status === 403, 'B refuses the blocked address', 3000)
    assert.ok(Date.now() - blockedAt < 1000, (Date.now() - blockedAt) + ' ms')
    a.svr.type('unblock 127.0.0.1')
    await a.svr.waitFor(/unblocked: 127\.0\.0\.1/)
    await waitUntil(async () => (await request(b.port, '/')).status === 200, 'B serves the address again', 3000)
  })

  it('gives a store that restarted without its data the fleet\'s blocklist again, instead of adopting the loss', async (t) => {
    requireTools(t, 'redis-server', 'script')
    const redis = await startRedis(t, { password: PASSWORD })
    const a = await instance(t, redis, { stateDirectory: 'state' }, { tty: true })
    const b = await instance(t, redis)
    const from = (address) => ({ headers: { 'x-forwarded-for': address }, agent: false })
    a.svr.type('block 203.0.113.7')
    await a.svr.waitFor(/blocked: 203\.0\.113\.7/)
    await waitUntil(async () => (await request(b.port, '/', from('203.0.113.7'))).status === 403, 'B refuses the blocked address', 3000)
    const marks = [a.svr.output.length, b.svr.output.length]
    // A crash with nothing on disk: the store comes back empty.
    await redis.stop()
    await redis.start()
    await a.svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ is back/, 15000, marks[0])
    await b.svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ is back/, 15000, marks[1])
    await waitUntil(async () => (await redis.command(['AUTH ' + redis.password, 'SMEMBERS svr:blocklist'])).includes('203.0.113.7'),
      'the store has the entry again', 5000)
    // Past a few polls: no instance took the empty store for the fleet's word.
    await sleep(1500)
    assert.deepEqual([(await request(a.port, '/', from('203.0.113.7'))).status, (await request(b.port, '/', from('203.0.113.7'))).status], [403, 403])
    assert.deepEqual([(await request(a.port, '/', from('203.0.113.8'))).status, (await request(b.port, '/', from('203.0.113.8'))).status], [200, 200])
    const saved = await fs.readFile(path.join(a.dir, 'state', 'blocklist.json'), 'utf8')
    assert.match(saved, /203\.0\.113\.7/)
    assert.match(a.svr.output.slice(marks[0]) + b.svr.output.slice(marks[1]), /blocklist is gone or older than this instance last read/)
    assert.doesNotMatch(a.svr.output.slice(0, marks[0]) + b.svr.output.slice(0, marks[1]), /blocklist is gone/)
  })

  it('starts and serves without the store, acts on its own meanwhile, and catches up when it is back', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t, { password: PASSWORD })
    await redis.stop()
    const port = await freePort()
    const site = await makeSite(t, {
      port: '127.0.0.1:' + port,
      workers: 1,
      metricsPath: '/metrics',
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1'],
      users: [userRecord('alice', 'alice-pw')],
      nonStandardCodes: [{ scode: 401, regex: '/^\\/secret/' }],
      store: { url: redis.url, passwordFile: 'store-password' }
    }, { 'secret/file.txt': 'secret' })
    await fs.writeFile(path.join(site.dir, 'store-password'), redis.password + '\n')
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ not reachable: ECONNREFUSED; every instance acts on its own until it is back/)
    assert.match((await request(port, '/metrics')).body, /\nsvr_store_up 0\n/)
    // The throttle counts locally while the store is down.
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await login(port, '203.0.113.9', 'guess' + i)).status)
    assert.deepEqual(statuses, [401, 401, 401])
    await redis.start()
    await svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ connected/, 15000)
    // The three local failures joined the store's count: two more lock.
    await sleep(200)
    const after = []
    for (let i = 0; i < 3; i++) after.push((await login(port, '203.0.113.9', 'again' + i)).status)
    assert.deepEqual(after, [401, 401, 429])
    assert.equal(svr.output.match(/not reachable/g).length, 1)
  })

  it('admits a rate limit\'s rate over the fleet: 3x the limit spread over two instances, 10 s', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t, { password: PASSWORD })
    const limits = { workers: 2, rateLimits: [{ path: '/', rate: 20, burst: 5 }] }
    const a = await instance(t, redis, limits)
    const b = await instance(t, redis, limits)
    // 8 keep-alive connections, half to each instance, asking 60 a second together.
    const agents = Array.from({ length: 8 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }))
    t.after(() => agents.forEach((agent) => agent.destroy()))
    const end = Date.now() + 10000
    const counts = { admitted: 0, refused: 0 }
    await Promise.all(agents.map(async (agent, i) => {
      await sleep(i * 16)
      while (Date.now() < end) {
        const started = Date.now()
        const res = await request(i % 2 === 0 ? a.port : b.port, '/', { agent })
        counts[res.status === 429 ? 'refused' : 'admitted']++
        await sleep(Math.max(0, 133 - (Date.now() - started)))
      }
    }))
    // 20 a second for 10 s, within 10 % (each instance alone would admit 200).
    assert.ok(counts.admitted >= 180 && counts.admitted <= 220, counts.admitted + ' admitted')
    assert.ok(counts.refused > 300, counts.refused + ' refused')
  })

  it('loses no request while the store is paused or killed, and bounds logins by commandTimeout', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t, { password: PASSWORD })
    // A command timeout well below the 1 s a worker waits for its primary.
    const { svr, port } = await instance(t, redis, { workers: 2, store: { url: redis.url, passwordFile: 'store-password', commandTimeout: 200 } })
    const agents = Array.from({ length: 4 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }))
    t.after(() => agents.forEach((agent) => agent.destroy()))
    const results = { statuses: new Map(), errors: [], slowestLogin: 0 }
    let running = true
    let guesses = 0
    const loops = agents.map(async (agent, i) => {
      while (running) {
        const loginRequest = i % 2 === 0
        const started = Date.now()
        try {
          // A wrong password from a new address each time: every one is
          // counted in the store (a right one is remembered by the worker),
          // and none is locked.
          const from = '10.' + (++guesses >> 16 & 255) + '.' + (guesses >> 8 & 255) + '.' + (guesses & 255)
          const res = loginRequest
            ? await request(port, '/secret/file.txt', { agent, headers: { authorization: basic('alice', 'wrong'), 'x-forwarded-for': from } })
            : await request(port, '/', { agent })
          results.statuses.set(res.status, (results.statuses.get(res.status) || 0) + 1)
          if (loginRequest) results.slowestLogin = Math.max(results.slowestLogin, Date.now() - started)
        } catch (err) {
          results.errors.push(err.code || err.message)
        }
      }
    })
    await sleep(500)
    // Every command waits 3 s: logins go on without the store after 200 ms.
    await redis.command(['AUTH ' + PASSWORD, 'CLIENT PAUSE 3000 ALL'])
    await sleep(3500)
    await redis.stop()
    await svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ lost/)
    await sleep(1000)
    await redis.start()
    await svr.waitFor(/store redis:\/\/127\.0\.0\.1:\d+ is back after \d+ s/, 15000)
    await sleep(500)
    running = false
    await Promise.all(loops)
    assert.deepEqual(results.errors, [])
    assert.deepEqual([...results.statuses.keys()].sort(), [200, 401])
    assert.ok(results.slowestLogin < 800, 'slowest login ' + results.slowestLogin + ' ms')
  })
})
