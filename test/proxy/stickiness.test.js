'use strict'

// Sticky clients: client-hash by rendezvous hashing (an upstream that
// leaves takes only its own clients along), and the cookie policy.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream } = require('../helpers/upstream')

const NAMES = ['a', 'b', 'c', 'd']

async function fourUpstreams (t) {
  const upstreams = []
  for (const name of NAMES) upstreams.push(await startUpstream(t, { name }))
  return upstreams
}

// Which upstream each client address lands on, through a trusted proxy's
// X-Forwarded-For, over a few keep-alive connections (so over both workers).
async function placements (port, clients) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  try {
    return await Promise.all(clients.map(async (client) => {
      const res = await request(port, '/x', { agent, headers: { 'x-forwarded-for': client } })
      assert.equal(res.status, 200)
      return JSON.parse(res.body).name
    }))
  } finally {
    agent.destroy()
  }
}

function counts (names) {
  const result = Object.fromEntries(NAMES.map((name) => [name, 0]))
  for (const name of names) result[name]++
  return result
}

describe('proxy stickiness', () => {
  it('client-hash: when one of four upstreams leaves, only its clients move, and they come back with it', async (t) => {
    const upstreams = await fourUpstreams(t)
    const site = await makeSite(t, {
      workers: 2,
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1'],
      proxy: [{ path: '/', policy: 'client-hash', upstreams: upstreams.map((u) => u.origin), maxFails: 1, failTimeout: 1500 }]
    })
    const svr = await startSvr(t, site.configFile)
    const clients = Array.from({ length: 400 }, (_, i) => '198.51.' + (100 + (i >> 8)) + '.' + (i & 255))
    const before = await placements(svr.port, clients)
    // Spread over all four (400 clients: about 100 each).
    for (const [name, count] of Object.entries(counts(before))) assert.ok(count >= 60 && count <= 140, name + ': ' + count)
    // The same answer on every request, whichever worker takes it.
    assert.deepEqual(await placements(svr.port, clients), before)
    await upstreams[3].stop()
    const during = await placements(svr.port, clients)
    const moved = clients.filter((client, i) => before[i] !== 'd' && during[i] !== before[i])
    assert.deepEqual(moved, [])
    assert.equal(counts(during).d, 0)
    // d's clients spread over the other three.
    const movedFromD = during.filter((name, i) => before[i] === 'd')
    assert.deepEqual([...new Set(movedFromD)].sort(), ['a', 'b', 'c'])
    await upstreams[3].start()
    await sleep(1700)
    assert.deepEqual(await placements(svr.port, clients), before)
  })

  it('cookie: a client keeps its upstream across requests and workers, and moves with a new cookie when it fails', async (t) => {
    const upstreams = await fourUpstreams(t)
    const site = await makeSite(t, {
      workers: 2,
      proxy: [{ path: '/', policy: 'cookie', cookie: { name: 'backend', maxAge: 3600 }, upstreams: upstreams.slice(0, 3).map((u) => u.origin) }]
    })
    const svr = await startSvr(t, site.configFile)
    const first = await request(svr.port, '/x')
    const name = JSON.parse(first.body).name
    const setCookie = first.headers['set-cookie']
    assert.equal(setCookie.length, 1)
    const match = /^backend=([A-Za-z0-9_-]{16}); Path=\/; HttpOnly; SameSite=Lax; Max-Age=3600$/.exec(setCookie[0])
    assert.ok(match, setCookie[0])
    // The value names the upstream without its address, plain or encoded
    // (a random value may hold any short run of digits: only the upstreams'
    // own ports would give them away).
    const decoded = Buffer.from(match[1], 'base64url').toString('latin1')
    for (const { origin } of upstreams) {
      const { hostname, port } = new URL(origin)
      for (const text of [match[1], decoded]) assert.ok(!text.includes(port) && !text.includes(hostname), text + ' names ' + origin)
    }
    const cookie = 'theme=dark; backend=' + match[1]
    const names = []
    for (let i = 0; i < 100; i++) {
      const res = await request(svr.port, '/x', { headers: { cookie } })
      assert.equal(res.headers['set-cookie'], undefined)
      names.push(JSON.parse(res.body).name)
    }
    assert.deepEqual(names, Array(100).fill(name))
    // Its upstream goes away: the next request is answered by another one,
    // with a cookie naming it, which the client then keeps.
    const gone = upstreams.find((u) => u.name === name)
    await gone.stop()
    const moved = await request(svr.port, '/x', { headers: { cookie } })
    assert.equal(moved.status, 200)
    const next = JSON.parse(moved.body).name
    assert.notEqual(next, name)
    const renewed = /^backend=([A-Za-z0-9_-]{16});/.exec(moved.headers['set-cookie'][0])[1]
    assert.notEqual(renewed, match[1])
    await gone.start()
    for (let i = 0; i < 20; i++) {
      const res = await request(svr.port, '/x', { headers: { cookie: 'backend=' + renewed } })
      assert.deepEqual([JSON.parse(res.body).name, res.headers['set-cookie']], [next, undefined])
    }
    // The old cookie leads back to the old upstream once it is up again.
    const back = await request(svr.port, '/x', { headers: { cookie } })
    assert.equal(JSON.parse(back.body).name, name)
    // A cookie naming no upstream of the route gets a fresh one.
    const forged = await request(svr.port, '/x', { headers: { cookie: 'backend=forged' } })
    assert.match(forged.headers['set-cookie'][0], /^backend=[A-Za-z0-9_-]{16};/)
  })
})
