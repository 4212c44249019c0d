'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream, echo } = require('../helpers/upstream')

// Three upstreams; "a" holds requests to /hold until release() is called.
async function threeUpstreams (t) {
  const held = []
  const hold = (req, res, upstream) => {
    if (req.url === '/hold') held.push(() => echo(req, res, upstream))
    else echo(req, res, upstream)
  }
  const upstreams = [await startUpstream(t, { name: 'a', handler: hold }), await startUpstream(t, { name: 'b' }), await startUpstream(t, { name: 'c' })]
  const release = () => { for (const answer of held.splice(0)) answer() }
  t.after(release)
  return { upstreams, held, release }
}

async function proxy (t, upstreams, policy, config = {}) {
  const site = await makeSite(t, { workers: 1, ...config, proxy: [{ path: '/', policy, upstreams: upstreams.map((u) => u.origin) }] })
  return startSvr(t, site.configFile)
}

async function nameOf (port, target = '/x', headers) {
  return JSON.parse((await request(port, target, { headers })).body).name
}

async function namesOf (port, count) {
  const names = []
  for (let i = 0; i < count; i++) names.push(await nameOf(port))
  return names
}

// Send /hold until upstream "a" holds one; returns the pending request
// (wrapped: an async function would wait for a promise it returns).
async function holdOnA (port, held) {
  for (;;) {
    let answered = false
    const pending = request(port, '/hold').finally(() => { answered = true })
    while (!answered && held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    if (held.length === 1) return { pending }
    await pending
  }
}

describe('proxy load-balancing policies', () => {
  it('round-robin: each upstream in turn', async (t) => {
    const { upstreams } = await threeUpstreams(t)
    const svr = await proxy(t, upstreams, 'round-robin')
    assert.deepEqual(await namesOf(svr.port, 6), ['a', 'b', 'c', 'a', 'b', 'c'])
  })

  it('least-connections: the upstream with the fewest requests in flight', async (t) => {
    const { upstreams, held, release } = await threeUpstreams(t)
    const svr = await proxy(t, upstreams, 'least-connections')
    const { pending } = await holdOnA(svr.port, held)
    // "a" has one in flight: b and c share the rest in turn.
    assert.deepEqual((await namesOf(svr.port, 4)).sort(), ['b', 'b', 'c', 'c'])
    release()
    assert.equal(JSON.parse((await pending).body).name, 'a')
    assert.deepEqual((await namesOf(svr.port, 3)).sort(), ['a', 'b', 'c'])
  })

  it('random-two: never the busier of the two, so never a busy upstream among idle ones', async (t) => {
    const { upstreams, held, release } = await threeUpstreams(t)
    const svr = await proxy(t, upstreams, 'random-two')
    const { pending } = await holdOnA(svr.port, held)
    const names = await namesOf(svr.port, 30)
    assert.equal(names.includes('a'), false)
    assert.deepEqual([...new Set(names)].sort(), ['b', 'c'])
    release()
    assert.equal(JSON.parse((await pending).body).name, 'a')
  })
})
