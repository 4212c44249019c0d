'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream } = require('../helpers/upstream')
const { waitUntil } = require('../helpers/wait')
const { primarySeries, fillsOver } = require('../helpers/cache')
const { startSvrOnTty } = require('../helpers/tty')
const { freePort, skipWithout } = require('../helpers/tools')

const BODY = 'x'.repeat(2000)

// An upstream whose answers may be kept for a minute (but /private's),
// which records what it was asked.
async function cachingUpstream (t) {
  const seen = []
  const upstream = await startUpstream(t, {
    handler (req, res) {
      seen.push(req.method + ' ' + req.url)
      const cacheControl = req.url.endsWith('/private') ? 'private, max-age=60' : 'max-age=60'
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': cacheControl })
      res.end(BODY)
    }
  })
  upstream.seen = seen
  return upstream
}

// A caching route on /c, and the metrics (which say when the primary is done with a fill).
async function cachedProxy (t, upstream, config = {}) {
  const site = await makeSite(t, { workers: 2, stateDirectory: 'state', metricsPath: '/metrics', ...config, proxy: [{ path: '/c', upstreams: [upstream.origin], cache: {} }] })
  const svr = await startSvr(t, site.configFile)
  svr.site = site
  return svr
}

async function cacheStatus (svr, target) {
  const res = await request(svr.port, target)
  assert.equal(res.status, 200, target)
  return res.headers['cache-status']
}

// A GET that stores, then one that finds it. The client has the answer
// before the entry is on disk and in the primary's budget: the second waits
// until the primary has every fill it let start end, or it could start one more.
async function fill (svr, target) {
  assert.equal(await cacheStatus(svr, target), 'svr; fwd=miss; stored', target)
  await fillsOver(svr)
  assert.equal(await cacheStatus(svr, target), 'svr; hit', target)
}

function purge (svr, target, opts = {}) {
  return request(opts.port || svr.port, target, { method: 'PURGE', ...opts })
}

// The sizes of the entry files in the cache directory.
async function entryFiles (dir) {
  const sizes = []
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) sizes.push((await fs.stat(path.join(entry.parentPath || entry.path, entry.name))).size)
  }
  return sizes
}

// An address of this machine other than loopback, where there is one.
function outsideAddress () {
  const found = Object.values(os.networkInterfaces()).flat().find((info) => info.family === 'IPv4' && !info.internal)
  return found === undefined ? null : found.address
}

describe('response cache administration', () => {
  it('reports the primary\'s fills, evictions, purges and holdings in the metrics', async (t) => {
    const upstream = await cachingUpstream(t)
    // Two entries of 2,000-byte bodies fit in 6,000 bytes, three do not.
    const svr = await cachedProxy(t, upstream, { responseCache: { maxSize: 6000, allowPurge: true } })
    const before = primarySeries((await request(svr.port, '/metrics')).body)
    assert.equal(before.svr_cache_entries, 0)
    for (const target of ['/c/1', '/c/2', '/c/3', '/c/4']) await fill(svr, target)
    assert.equal(await cacheStatus(svr, '/c/private'), 'svr; fwd=miss')
    await fillsOver(svr)
    // The least recently used went: /c/1 and /c/2 are fetched again.
    assert.equal(await cacheStatus(svr, '/c/4'), 'svr; hit')
    const files = await entryFiles(path.join(svr.site.dir, 'state', 'cache'))
    assert.equal(files.length, 2)
    assert.deepEqual(primarySeries((await request(svr.port, '/metrics')).body), {
      svr_cache_fills_started_total: 5,
      'svr_cache_fills_ended_total{result="stored"}': 4,
      'svr_cache_fills_ended_total{result="unstored"}': 1,
      'svr_cache_fills_ended_total{result="abandoned"}': 0,
      svr_cache_evictions_total: 2,
      'svr_cache_purged_total{source="console"}': 0,
      'svr_cache_purged_total{source="request"}': 0,
      'svr_cache_purged_total{source="reload"}': 0,
      'svr_cache_purged_total{source="unsafe"}': 0,
      svr_cache_size_bytes: files[0] + files[1],
      svr_cache_entries: 2
    })
    assert.equal((await purge(svr, '/c/*')).body, '2 cached answers removed\n')
    await fill(svr, '/c/1')
    const after = primarySeries((await request(svr.port, '/metrics')).body)
    assert.deepEqual([after.svr_cache_fills_started_total, after.svr_cache_evictions_total, after['svr_cache_purged_total{source="request"}'], after.svr_cache_entries],
      [6, 2, 2, 1])
  })

  it('counts the entries an earlier run left on disk: they are evicted to fit maxSize, and purged', async (t) => {
    const upstream = await cachingUpstream(t)
    const first = await cachedProxy(t, upstream, { responseCache: { allowPurge: true } })
    for (const target of ['/c/1', '/c/2', '/c/3']) await fill(first, target)
    await fillsOver(first)
    first.child.kill('SIGTERM')
    await first.exited
    const dir = path.join(first.site.dir, 'state', 'cache')
    assert.equal((await entryFiles(dir)).length, 3)
    // The same directory, room for two: the oldest goes at the start.
    await first.site.writeConfig({ workers: 2, stateDirectory: 'state', metricsPath: '/metrics',
      responseCache: { maxSize: 6000, allowPurge: true }, proxy: [{ path: '/c', upstreams: [upstream.origin], cache: {} }] })
    const second = await startSvr(t, first.site.configFile)
    await waitUntil(async () => primarySeries((await request(second.port, '/metrics')).body).svr_cache_entries === 2, 'two entries adopted')
    assert.equal((await entryFiles(dir)).length, 2)
    assert.equal(await cacheStatus(second, '/c/3'), 'svr; hit')
    // A purge reaches what the earlier run stored.
    assert.equal((await purge(second, '/c/*')).body, '2 cached answers removed\n')
    assert.equal(await cacheStatus(second, '/c/3'), 'svr; fwd=miss; stored')
    await fillsOver(second)
  })

  it('purges one URL, or every URL under a prefix, with PURGE from this machine', async (t) => {
    const upstream = await cachingUpstream(t)
    const svr = await cachedProxy(t, upstream, { responseCache: { allowPurge: true } })
    for (const target of ['/c/a/1', '/c/a/2', '/c/a/2?v=1', '/c/b/1']) await fill(svr, target)
    const one = await purge(svr, '/c/a/1')
    assert.deepEqual([one.status, one.headers['content-type'], one.body], [200, 'text/plain; charset=utf-8', '1 cached answer removed\n'])
    // Both workers had read it (fill's two requests): neither its file nor
    // their memory has it now.
    await fill(svr, '/c/a/1')
    assert.equal(await cacheStatus(svr, '/c/a/2'), 'svr; hit')
    assert.equal((await purge(svr, '/c/a/*')).body, '3 cached answers removed\n')
    for (const target of ['/c/a/1', '/c/a/2', '/c/a/2?v=1']) assert.equal(await cacheStatus(svr, target), 'svr; fwd=miss; stored', target)
    assert.equal(await cacheStatus(svr, '/c/b/1'), 'svr; hit')
    assert.equal((await purge(svr, '/c/nothing')).body, '0 cached answers removed\n')
    await fillsOver(svr)
    // Answered by svr, never forwarded.
    assert.equal(upstream.seen.filter((line) => line.startsWith('PURGE')).length, 0)
  })

  it('refuses PURGE from a client a local proxy forwards for, whatever X-Forwarded-For says', async (t) => {
    const upstream = await cachingUpstream(t)
    const svr = await cachedProxy(t, upstream, { responseCache: { allowPurge: true }, enableIPSpoofing: true, trustedProxies: ['127.0.0.1'] })
    await fill(svr, '/c/p')
    for (const forwarded of ['203.0.113.7', '127.0.0.1, 203.0.113.7']) {
      const refused = await purge(svr, '/c/p', { headers: { 'x-forwarded-for': forwarded } })
      assert.equal(refused.status, 403, forwarded)
    }
    assert.equal(await cacheStatus(svr, '/c/p'), 'svr; hit')
    // The proxy's own request, and one it says comes from this machine.
    assert.equal((await purge(svr, '/c/p', { headers: { 'x-forwarded-for': '127.0.0.1' } })).status, 200)
    assert.equal((await purge(svr, '/c/p')).status, 200)
  })

  it('refuses PURGE from another address, even from a trusted proxy that says the client is local', async (t) => {
    const outside = outsideAddress()
    if (outside === null) {
      t.skip('this machine has no IPv4 address besides loopback')
      return
    }
    const upstream = await cachingUpstream(t)
    const svr = await cachedProxy(t, upstream, { port: '0.0.0.0:0', responseCache: { allowPurge: true }, enableIPSpoofing: true, trustedProxies: [outside] })
    await fill(svr, '/c/p')
    for (const headers of [{}, { 'x-forwarded-for': '127.0.0.1' }]) {
      const refused = await purge(svr, '/c/p', { host: outside, headers: { host: '127.0.0.1:' + svr.port, ...headers } })
      assert.equal(refused.status, 403, JSON.stringify(headers))
    }
    assert.equal(await cacheStatus(svr, '/c/p'), 'svr; hit')
  })

  it('leaves PURGE to the upstream without allowPurge', async (t) => {
    const upstream = await cachingUpstream(t)
    const svr = await cachedProxy(t, upstream)
    await fill(svr, '/c/p')
    assert.equal((await purge(svr, '/c/p')).status, 200)
    assert.deepEqual(upstream.seen, ['GET /c/p', 'PURGE /c/p'])
    // A method the cache does not know the safety of, which succeeded: the
    // stored answer is dropped (RFC 9111 4.4), and the next GET fetches it.
    await waitUntil(async () => (await cacheStatus(svr, '/c/p')) === 'svr; fwd=miss; stored', 'the stored answer is dropped')
    await fillsOver(svr)
  })

  it('purges from the console, and counts it', { skip: skipWithout('script') }, async (t) => {
    const upstream = await cachingUpstream(t)
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port, workers: 2, stateDirectory: 'state', metricsPath: '/metrics', proxy: [{ path: '/c', upstreams: [upstream.origin], cache: {} }] })
    const svr = await startSvrOnTty(t, site.configFile)
    svr.port = port
    for (const target of ['/c/1', '/c/2']) await fill(svr, target)
    const mark = svr.output.length
    svr.type('purge http://127.0.0.1/c/* http://127.0.0.1/c/2')
    await svr.waitFor(/purge: 2 cached answers removed\n[\s\S]*purge: 0 cached answers removed\n/, 10000, mark)
    assert.equal(await cacheStatus(svr, '/c/2'), 'svr; fwd=miss; stored')
    await fillsOver(svr)
    assert.equal(primarySeries((await request(port, '/metrics')).body)['svr_cache_purged_total{source="console"}'], 2)
  })

  for (const purgeOnReload of [true, false]) {
    it('keeps the entries over a reload ' + (purgeOnReload ? 'unless purgeOnReload' : 'by default'), async (t) => {
      const upstream = await cachingUpstream(t)
      const svr = await cachedProxy(t, upstream, { responseCache: { purgeOnReload } })
      await fill(svr, '/c/r')
      svr.signal('SIGHUP')
      await svr.waitFor(/reload applied/, 20000)
      assert.equal(await cacheStatus(svr, '/c/r'), purgeOnReload ? 'svr; fwd=miss; stored' : 'svr; hit')
      assert.equal(/purgeOnReload removed 1 cached answer\n/.test(svr.output), purgeOnReload)
      await fillsOver(svr)
    })
  }
})
