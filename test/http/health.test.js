'use strict'

const { describe, it, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')
const { Lifecycle } = require('../../lib/pipeline/lifecycle')

describe('Lifecycle', () => {
  it('is starting until listening plus the ready delay, then ok, and draining for good once drained', () => {
    const lifecycle = new Lifecycle(500)
    assert.equal(lifecycle.state(0), 'starting')
    lifecycle.listening(1000)
    assert.equal(lifecycle.state(1499), 'starting')
    assert.equal(lifecycle.state(1500), 'ok')
    lifecycle.drain()
    assert.equal(lifecycle.state(99999), 'draining')
  })
})

describe('healthPath', () => {
  const scope = createScope()
  after(() => scope.cleanup())

  it('answers 200 before every site rule, and only for the exact path', async () => {
    // A block list that shuts out the test client, and a rewrite of
    // everything: the health check must still answer.
    const site = await makeSite(scope, {
      workers: 1,
      healthPath: '/healthz',
      blacklist: ['127.0.0.1', '::1'],
      customHeaders: { 'X-Site': 'yes' }
    })
    const svr = await startSvr(scope, site.configFile)
    const ok = await request(svr.port, '/healthz')
    assert.equal(ok.status, 200)
    assert.equal(ok.body, 'ok\n')
    assert.equal(ok.headers['cache-control'], 'no-store')
    assert.equal(ok.headers['x-site'], 'yes', 'site headers still apply')
    const head = await request(svr.port, '/healthz', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    const post = await request(svr.port, '/healthz', { method: 'POST' })
    assert.equal(post.status, 405)
    assert.equal(post.headers.allow, 'GET, HEAD')
    // Other spellings are the site's, which blocks this client.
    assert.equal((await request(svr.port, '/healthz?x=1')).status, 403)
    assert.equal((await request(svr.port, '/Healthz')).status, 403)
    assert.equal((await request(svr.port, '/index.html')).status, 403)
  })

  it('is off by default: the path belongs to the site', async () => {
    const site = await makeSite(scope, { workers: 1 }, { healthz: 'a file' })
    const svr = await startSvr(scope, site.configFile)
    const res = await request(svr.port, '/healthz')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'a file')
  })

  it('answers 503 during healthReadyDelay, then 200', async () => {
    const site = await makeSite(scope, { workers: 1, healthPath: '/healthz', healthReadyDelay: 1500 })
    const svr = await startSvr(scope, site.configFile)
    const early = await request(svr.port, '/healthz')
    assert.equal(early.status, 503)
    assert.equal(early.body, 'starting\n')
    // The site itself is served meanwhile; only the check says "not yet".
    assert.equal((await request(svr.port, '/index.html')).status, 200)
    await new Promise((resolve) => setTimeout(resolve, 1600))
    assert.equal((await request(svr.port, '/healthz')).status, 200)
  })

  it('answers 503 as soon as SIGTERM arrives and serves the site through shutdownDelay, then stops', async () => {
    const site = await makeSite(scope, { workers: 2, healthPath: '/healthz', shutdownDelay: 2500 })
    const svr = await startSvr(scope, site.configFile)
    assert.equal((await request(svr.port, '/healthz')).status, 200)
    const signalled = Date.now()
    svr.signal('SIGTERM')
    await svr.waitFor(/shutting down on SIGTERM/)
    // The primary logs before its message reaches the workers: allow a
    // moment for that (on a busy machine, longer than eight quick checks
    // take), then every worker reports draining while still serving pages.
    // The loop stays well inside the delay, also on a slow machine.
    const seen = []
    while ((seen.length < 8 || !seen.includes(503)) && Date.now() - signalled < 1200) {
      const health = await request(svr.port, '/healthz', { agent: false })
      seen.push(health.status)
      if (health.status === 503) assert.equal(health.headers.connection, 'close')
      assert.equal((await request(svr.port, '/index.html', { agent: false })).status, 200)
    }
    const firstDraining = seen.indexOf(503)
    assert.ok(firstDraining !== -1, 'health turned 503: ' + seen)
    assert.deepEqual(seen.slice(firstDraining), seen.slice(firstDraining).map(() => 503))
    const exit = await svr.exited
    assert.equal(exit.code, 0)
    assert.ok(Date.now() - signalled >= 2400, 'the drain waited for shutdownDelay')
  })
})
