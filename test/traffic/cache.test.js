'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream } = require('../helpers/upstream')

// An upstream that answers each path with its own body and fields, and
// counts what it was asked.
async function countingUpstream (t, answer) {
  const seen = []
  const upstream = await startUpstream(t, {
    handler (req, res) {
      seen.push(req.url)
      const { status = 200, headers = {}, body = 'body of ' + req.url, delay = 0 } = answer(req)
      setTimeout(() => {
        res.writeHead(status, { 'Content-Type': 'text/plain', ...headers })
        res.end(body)
      }, delay)
    }
  })
  upstream.seen = seen
  return upstream
}

async function cachedProxy (t, upstream, cache = { validity: { 200: 60 } }, config = {}, path = '/') {
  const site = await makeSite(t, { workers: 2, stateDirectory: 'state', ...config, proxy: [{ path, upstreams: [upstream.origin], cache }] })
  return startSvr(t, site.configFile)
}

describe('response cache', () => {
  it('fetches a cold key once for 500 concurrent requests over 2 workers, and serves it from either', async (t) => {
    const upstream = await countingUpstream(t, () => ({ delay: 300 }))
    // A route on /cold: one on / would shadow the metrics.
    const svr = await cachedProxy(t, upstream, undefined, { metricsPath: '/metrics' }, '/cold')
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 })
    t.after(() => agent.destroy())
    const answers = await Promise.all(Array.from({ length: 500 }, () => request(svr.port, '/cold', { agent })))
    assert.deepEqual([...new Set(answers.map((res) => res.status + ' ' + res.body))], ['200 body of /cold'])
    assert.deepEqual(upstream.seen, ['/cold'])
    const statuses = new Set(answers.map((res) => res.headers['cache-status']))
    assert.deepEqual([...statuses].sort(), ['svr; fwd=miss; stored', 'svr; hit'])
    // Later requests on new connections (either worker): hits.
    for (let i = 0; i < 10; i++) {
      const res = await request(svr.port, '/cold')
      assert.deepEqual([res.status, res.body, res.headers['cache-status']], [200, 'body of /cold', 'svr; hit'])
    }
    assert.deepEqual(upstream.seen, ['/cold'])
    // Counted over both workers: one fetch stored, every other request a hit.
    const metrics = (await request(svr.port, '/metrics')).body
    const sum = (result) => [...metrics.matchAll(new RegExp('\\nsvr_cache_requests_total\\{result="' + result + '",worker="\\d+"\\} (\\d+)', 'g'))]
      .reduce((total, match) => total + Number(match[1]), 0)
    assert.deepEqual([sum('stored'), sum('hit'), sum('miss')], [1, 509, 0])
  })

  it('never stores what is private, sets a cookie, or answers credentials', async (t) => {
    const upstream = await countingUpstream(t, (req) => ({
      headers: {
        '/private': { 'Cache-Control': 'private, max-age=60' },
        '/no-store': { 'Cache-Control': 'no-store' },
        '/cookie': { 'Set-Cookie': 'session=1', 'Cache-Control': 'max-age=60' },
        '/auth': { 'Cache-Control': 'max-age=60' }
      }[req.url] || {}
    }))
    const svr = await cachedProxy(t, upstream)
    for (const path of ['/private', '/no-store', '/cookie']) {
      for (let i = 0; i < 2; i++) assert.equal((await request(svr.port, path)).headers['cache-status'], 'svr; fwd=miss')
    }
    for (let i = 0; i < 2; i++) assert.equal((await request(svr.port, '/auth', { headers: { authorization: 'Basic eDp5' } })).headers['cache-status'], 'svr; fwd=miss')
    assert.deepEqual(upstream.seen, ['/private', '/private', '/no-store', '/no-store', '/cookie', '/cookie', '/auth', '/auth'])
  })

  it('passes requests other than GET and HEAD on, though a fresh entry has the URL', async (t) => {
    const upstream = await countingUpstream(t, (req) => ({ headers: { 'Cache-Control': 'max-age=60' }, body: req.method + ' answered' }))
    const svr = await cachedProxy(t, upstream)
    for (let i = 0; i < 2; i++) await request(svr.port, '/m')
    // OPTIONS changes nothing: the entry stays.
    const options = await request(svr.port, '/m', { method: 'OPTIONS' })
    assert.deepEqual([options.body, options.headers['cache-status']], ['OPTIONS answered', 'svr; fwd=method'])
    assert.equal((await request(svr.port, '/m', { method: 'HEAD' })).headers['cache-status'], 'svr; hit')
    for (const method of ['POST', 'DELETE']) {
      const res = await request(svr.port, '/m', { method })
      assert.deepEqual([res.body, res.headers['cache-status']], [method + ' answered', 'svr; fwd=method'])
    }
    assert.equal(upstream.seen.length, 4)
  })

  it('keeps the variants of a Vary answer apart', async (t) => {
    const upstream = await countingUpstream(t, (req) => ({
      headers: { Vary: 'Accept-Language', 'Cache-Control': 'max-age=60' },
      body: 'lang ' + (req.headers['accept-language'] || 'none')
    }))
    const svr = await cachedProxy(t, upstream)
    const get = async (lang) => (await request(svr.port, '/v', { headers: lang === null ? {} : { 'accept-language': lang } })).body
    const got = []
    for (const lang of ['en', 'fr', 'en', null, 'fr', null]) {
      got.push(await get(lang))
      // An answer is stored once its last byte went to the client: the next
      // request for it may come sooner, before anyone knows its variants.
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    assert.deepEqual(got, ['lang en', 'lang fr', 'lang en', 'lang none', 'lang fr', 'lang none'])
    assert.equal(upstream.seen.length, 3)
  })

  it('answers a stale entry at once within staleWhileRevalidate, and refreshes it behind the client', async (t) => {
    let version = 0
    const upstream = await countingUpstream(t, () => ({ headers: { 'Cache-Control': 'max-age=1' }, body: 'v' + ++version, delay: 400 }))
    const svr = await cachedProxy(t, upstream, { staleWhileRevalidate: 30 })
    assert.equal((await request(svr.port, '/r')).body, 'v1')
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const started = Date.now()
    const stale = await Promise.all(Array.from({ length: 10 }, () => request(svr.port, '/r')))
    // Answered without waiting for the upstream's 400 ms, from the stale entry.
    assert.ok(Date.now() - started < 300, (Date.now() - started) + ' ms')
    assert.deepEqual([...new Set(stale.map((res) => res.body + ' ' + res.headers['cache-status']))], ['v1 svr; hit; detail=stale'])
    // One refresh for all of them, whichever worker they reached.
    await new Promise((resolve) => setTimeout(resolve, 700))
    assert.deepEqual(upstream.seen, ['/r', '/r'])
    const fresh = await request(svr.port, '/r')
    assert.deepEqual([fresh.body, fresh.headers['cache-status']], ['v2', 'svr; hit'])
  })

  it('answers from a stale entry within staleIfError while the only upstream is down', async (t) => {
    const upstream = await countingUpstream(t, () => ({ headers: { 'Cache-Control': 'max-age=1' } }))
    const svr = await cachedProxy(t, upstream, { staleIfError: 60 })
    assert.equal((await request(svr.port, '/s')).status, 200)
    await upstream.stop()
    await new Promise((resolve) => setTimeout(resolve, 1200))
    const answers = []
    for (let i = 0; i < 20; i++) answers.push(await request(svr.port, '/s'))
    assert.deepEqual([...new Set(answers.map((res) => res.status + ' ' + res.body + ' ' + res.headers['cache-status']))], ['200 body of /s svr; fwd=stale'])
  })
})
