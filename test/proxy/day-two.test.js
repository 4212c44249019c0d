'use strict'

// What operators set once a site is in use: weights, backups, slow start,
// and a limit on the requests each upstream gets, with a bounded queue.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream, echo } = require('../helpers/upstream')
const { Member } = require('../../lib/proxy/member')
const { createPolicy } = require('../../lib/proxy/balance')

async function proxied (t, route, config = {}) {
  const site = await makeSite(t, { workers: 2, ...config, proxy: [{ path: '/', ...route }] })
  return startSvr(t, site.configFile)
}

// `count` requests over a few keep-alive connections (so over both
// workers); the upstream names that answered, counted.
async function tally (port, count, parallel = 4) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel })
  const seen = {}
  let next = 0
  async function loop () {
    while (next < count) {
      next++
      const res = await request(port, '/x', { agent })
      assert.equal(res.status, 200)
      const name = JSON.parse(res.body).name
      seen[name] = (seen[name] || 0) + 1
    }
  }
  try {
    await Promise.all(Array.from({ length: parallel }, loop))
  } finally {
    agent.destroy()
  }
  return seen
}

// An upstream that holds each request `ms` and notes the most it held at once.
async function slowUpstream (t, name, ms) {
  const upstream = await startUpstream(t, {
    name,
    handler (req, res) {
      upstream.active++
      upstream.peak = Math.max(upstream.peak, upstream.active)
      setTimeout(() => {
        upstream.active--
        echo(req, res, upstream)
      }, ms)
    }
  })
  upstream.active = 0
  upstream.peak = 0
  return upstream
}

describe('proxy weights, backups and slow start', () => {
  // least-connections and random-two weigh the requests in flight by the
  // weights, and share by weight among upstreams equally loaded: one
  // request at a time shows the weights alone.
  for (const [policy, parallel] of [['round-robin', 4], ['least-connections', 1], ['random-two', 1]]) {
    it(policy + ': shares by weight over 2,000 requests', async (t) => {
      const upstreams = [await startUpstream(t, { name: 'a' }), await startUpstream(t, { name: 'b' }), await startUpstream(t, { name: 'c' })]
      const weights = [1, 2, 5]
      const svr = await proxied(t, { policy, upstreams: upstreams.map((u, i) => ({ url: u.origin, weight: weights[i] })) })
      const seen = await tally(svr.port, 2000, parallel)
      const shares = ['a', 'b', 'c'].map((name) => (seen[name] || 0) / 2000)
      // Within 5 points of 1/8, 2/8 and 5/8.
      weights.forEach((weight, i) => assert.ok(Math.abs(shares[i] - weight / 8) <= 0.05, JSON.stringify(seen)))
    })
  }

  it('a backup gets requests only while no primary is up', async (t) => {
    const a = await startUpstream(t, { name: 'a' })
    const b = await startUpstream(t, { name: 'b' })
    const spare = await startUpstream(t, { name: 'spare' })
    const svr = await proxied(t, {
      upstreams: [a.origin, b.origin, { url: spare.origin, backup: true }],
      maxFails: 1,
      failTimeout: 1000
    })
    assert.deepEqual(Object.keys(await tally(svr.port, 60)).sort(), ['a', 'b'])
    assert.equal(spare.hits, 0)
    await a.stop()
    await b.stop()
    // Each request first tries the primaries (until they are out), then the backup: none fails.
    assert.deepEqual(await tally(svr.port, 60), { spare: 60 })
    await a.start()
    // a is back once its exclusion is over; b stays down, and its refusals go on to a.
    await sleep(1200)
    const hitsBefore = spare.hits
    assert.deepEqual(await tally(svr.port, 60), { a: 60 })
    assert.equal(spare.hits, hitsBefore)
  })

  it('slow start: a recovered upstream ramps from a tenth of its weight to all of it', () => {
    const upstream = { inFlight: 0, upSince: 10000, name: 'http://127.0.0.1:1' }
    const member = new Member(upstream, { weight: 4, backup: false }, Infinity, 2000)
    assert.deepEqual([10000, 11000, 12000, 20000].map((now) => member.weightAt(now)), [0.4, 2.2, 4, 4])
    // With round-robin, the share follows: over the first second, about a
    // fifth of an equal peer's requests (a tenth rising to a half).
    const peer = new Member({ inFlight: 0, upSince: 0, name: 'http://127.0.0.1:2' }, { weight: 4, backup: false }, Infinity, 2000)
    const pick = createPolicy('round-robin')
    const counts = new Map([[member, 0], [peer, 0]])
    for (let now = 10000; now < 11000; now++) {
      const picked = pick([member, peer], null, now)
      counts.set(picked, counts.get(picked) + 1)
    }
    const share = counts.get(member) / 1000
    assert.ok(share > 0.15 && share < 0.3, String(share))
    const none = new Member(upstream, { weight: 4, backup: false }, Infinity, 0)
    assert.equal(none.weightAt(10001), 4)
  })
})

describe('proxy connection limits', () => {
  it('sends no upstream more than maxConnections requests at once; the queue waits, and beyond it 503', async (t) => {
    const upstream = await slowUpstream(t, 'app', 600)
    // A route on /x: one on / would shadow the status page and the metrics.
    const svr = await proxied(t, { path: '/x', upstreams: [upstream.origin], maxConnections: 2, queueSize: 3, queueTimeout: 5000 },
      { workers: 1, allowStatus: true, metricsPath: '/metrics' })
    const pending = Promise.all(Array.from({ length: 12 }, () => request(svr.port, '/x')))
    await sleep(300)
    // While the first two are held: two in flight, three waiting.
    const status = (await request(svr.port, '/svrjsstatus.svr')).body
    assert.match(status, new RegExp('<tr class="upstream"><td>' + upstream.origin + '</td><td>up</td><td>\\d+</td><td>0</td><td>2</td><td>3</td></tr>'))
    const answers = await pending
    const statuses = answers.map((res) => res.status).sort()
    assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(7).fill(503)])
    assert.equal(upstream.peak, 2)
    assert.deepEqual([...new Set(answers.filter((res) => res.status === 503).map((res) => res.headers['retry-after']))], ['1'])
    const metrics = (await request(svr.port, '/metrics')).body
    assert.match(metrics, new RegExp('\nsvr_proxy_queue_rejected_total\\{upstreams="' + upstream.origin + '",reason="full",worker="1"\\} 7\n'))
  })

  it('shares maxConnections between the workers, and answers 503 once queueTimeout is over', async (t) => {
    const upstream = await slowUpstream(t, 'app', 1500)
    const svr = await proxied(t, { upstreams: [upstream.origin], maxConnections: 4, queueSize: 100, queueTimeout: 400 })
    const started = Date.now()
    const answers = await Promise.all(Array.from({ length: 16 }, () => request(svr.port, '/x')))
    const statuses = answers.map((res) => res.status)
    // Each worker sends at most 2; those beyond waited 400 ms and got 503.
    assert.ok(upstream.peak <= 4, String(upstream.peak))
    assert.equal(statuses.filter((status) => status === 200).length, upstream.hits)
    assert.equal(statuses.filter((status) => status === 503).length, 16 - upstream.hits)
    assert.ok(upstream.hits <= 4, String(upstream.hits))
    assert.ok(Date.now() - started >= 1500)
  })

  it('lets a client that leaves the queue go without sending its request', async (t) => {
    const upstream = await slowUpstream(t, 'app', 800)
    const svr = await proxied(t, { upstreams: [upstream.origin], maxConnections: 1, queueTimeout: 5000 }, { workers: 1 })
    const held = request(svr.port, '/held')
    await sleep(100)
    // Queued behind /held, then gone.
    const leaving = http.get({ host: '127.0.0.1', port: svr.port, path: '/leaving', agent: false })
    leaving.on('error', () => {})
    await sleep(200)
    leaving.destroy()
    assert.equal((await held).status, 200)
    const after = await request(svr.port, '/after')
    assert.equal(after.status, 200)
    assert.deepEqual(upstream.hits, 2)
  })

  it('ends a cache fill whose request waited too long or left the queue, so the requests waiting on it go on', async (t) => {
    const upstream = await slowUpstream(t, 'app', 1500)
    const svr = await proxied(t, { upstreams: [upstream.origin], maxConnections: 1, queueTimeout: 300, cache: {} },
      { workers: 1, stateDirectory: 'state', responseCache: { lockTimeout: 10000 } })
    const held = request(svr.port, '/held')
    await sleep(100)
    // /k misses: its request fills the key, but waits in the queue behind /held and expires.
    const started = Date.now()
    const filling = request(svr.port, '/k', { agent: false })
    await sleep(50)
    // Waits on that fill; without its end it would wait for lockTimeout (10 s).
    const waiting = request(svr.port, '/k', { agent: false })
    assert.equal((await filling).status, 503)
    assert.equal((await waiting).status, 503)
    assert.ok(Date.now() - started < 2000, 'the waiting request was answered after ' + (Date.now() - started) + ' ms')
    assert.equal((await held).status, 200)
    // A client that leaves the queue while filling ends the fill too.
    const again = request(svr.port, '/held2')
    await sleep(100)
    const leaving = http.get({ host: '127.0.0.1', port: svr.port, path: '/k2', agent: false })
    leaving.on('error', () => {})
    await sleep(50)
    const waitingOnLeaver = request(svr.port, '/k2', { agent: false })
    await sleep(50)
    const left = Date.now()
    leaving.destroy()
    assert.equal((await waitingOnLeaver).status, 503)
    assert.ok(Date.now() - left < 1000, 'answered ' + (Date.now() - left) + ' ms after the filler left')
    await again
  })

  it('holds no connection for a client that left before its request reached the proxy', async (t) => {
    const upstream = await startUpstream(t, { name: 'app', handler: echo })
    // Basic auth with scrypt holds requests back before the proxy stage for
    // a while: their clients can leave meanwhile.
    const salt = crypto.randomBytes(16).toString('hex')
    const alice = { name: 'alice', salt, scrypt: true, pass: crypto.scryptSync('alice-pw', salt, 64, { N: 16384, r: 8, p: 1 }).toString('hex') }
    const svr = await proxied(t, { upstreams: [upstream.origin], maxConnections: 1, queueTimeout: 1000 },
      { workers: 1, users: [alice], nonStandardCodes: [{ scode: 401, regex: '/^\\/protected/', disableBruteProtection: true }] })
    const authorization = 'Basic ' + Buffer.from('alice:alice-pw').toString('base64')
    const leaving = Array.from({ length: 6 }, (_, i) => {
      const req = http.get({ host: '127.0.0.1', port: svr.port, path: '/protected/' + i, agent: false, headers: { authorization } })
      req.on('error', () => {})
      return req
    })
    await sleep(20)
    for (const req of leaving) req.destroy()
    await sleep(1500)
    const after = await request(svr.port, '/after')
    assert.deepEqual([after.status, after.status === 200 ? JSON.parse(after.body).url : after.body.slice(0, 40)], [200, '/after'])
  })
})
