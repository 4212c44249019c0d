'use strict'

// What the response cache answers from an entry (preconditions, ranges,
// HEAD), how it revalidates a stale entry upstream, and what it stands in
// for: the parts of HTTP caching that turn on validators and ranges.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { fillsOver } = require('../helpers/cache')
const { startUpstream } = require('../helpers/upstream')
const { waitUntil } = require('../helpers/wait')

const BODY = '0123456789abcdefghijklmnopqrstuvwxyz'
const LAST_MODIFIED = 'Tue, 01 Sep 2026 10:00:00 GMT'

/**
 * An upstream with one versioned document at every path: ETag "v<version>",
 * answering conditional requests itself; `status` replaces its answers.
 */
async function documentUpstream (t, { cacheControl = 'max-age=1' } = {}) {
  const doc = { version: 1, status: 0, seen: [] }
  doc.upstream = await startUpstream(t, {
    handler (req, res) {
      const tag = '"v' + doc.version + '"'
      doc.seen.push([req.method, req.headers['if-none-match'] || '-', req.headers.range || '-'])
      if (doc.status !== 0) {
        res.writeHead(doc.status, { 'Content-Type': 'text/plain' })
        res.end('upstream failure')
        return
      }
      const fields = { 'Cache-Control': cacheControl, ETag: tag, 'Last-Modified': LAST_MODIFIED, 'Content-Type': 'text/plain', 'X-Version': String(doc.version) }
      if (req.headers['if-none-match'] === tag) {
        res.writeHead(304, { ...fields, 'X-Revalidated': 'yes' })
        res.end()
        return
      }
      const body = doc.version + ':' + BODY
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || '')
      if (range !== null) {
        res.writeHead(206, { ...fields, 'Content-Range': `bytes ${range[1]}-${range[2]}/${body.length}` })
        res.end(body.slice(Number(range[1]), Number(range[2]) + 1))
        return
      }
      res.writeHead(200, { ...fields, 'Content-Length': Buffer.byteLength(body) })
      res.end(body)
    }
  })
  return doc
}

async function cachedSvr (t, doc, cache = {}, config = {}) {
  const site = await makeSite(t, { workers: 2, stateDirectory: 'state', metricsPath: '/metrics', proxy: [{ path: '/doc', upstreams: [doc.upstream.origin], cache }], ...config })
  return startSvr(t, site.configFile)
}

describe('response cache: validators, ranges and stand-ins', () => {
  it('answers its own 304 and 412 from an entry, whatever the client sent upstream before', async (t) => {
    const doc = await documentUpstream(t, { cacheControl: 'max-age=60' })
    const svr = await cachedSvr(t, doc)
    // The fill asks for the whole answer, even for a client that has it.
    const first = await request(svr.port, '/doc/a', { headers: { 'if-none-match': '"v1"' } })
    assert.deepEqual([first.status, first.body], [200, '1:' + BODY])
    assert.deepEqual(doc.seen, [['GET', '-', '-']])
    await fillsOver(svr)
    const cases = [
      [{ 'if-none-match': '"v1"' }, 304],
      [{ 'if-none-match': 'W/"v1", "v9"' }, 304],
      [{ 'if-none-match': '"v9"' }, 200],
      [{ 'if-modified-since': LAST_MODIFIED }, 304],
      [{ 'if-modified-since': 'Mon, 31 Aug 2026 10:00:00 GMT' }, 200],
      [{ 'if-match': '"v9"' }, 412],
      [{ 'if-match': '"v1"' }, 200],
      [{ 'if-unmodified-since': 'Mon, 31 Aug 2026 10:00:00 GMT' }, 412]
    ]
    const statuses = []
    for (const [headers] of cases) statuses.push((await request(svr.port, '/doc/a', { headers })).status)
    assert.deepEqual(statuses, cases.map(([, status]) => status))
    const notModified = await request(svr.port, '/doc/a', { headers: { 'if-none-match': '"v1"' } })
    assert.deepEqual([notModified.body, notModified.headers.etag, notModified.headers['cache-control'], notModified.headers['cache-status'], notModified.headers['x-version']],
      ['', '"v1"', 'max-age=60', 'svr; hit', undefined])
    assert.equal(doc.seen.length, 1)
  })

  it('answers one range, a HEAD and If-Range from a stored body, and a range it cannot give with 416', async (t) => {
    const doc = await documentUpstream(t, { cacheControl: 'max-age=60' })
    const svr = await cachedSvr(t, doc)
    // A range that finds nothing stored goes upstream as it is, and stores nothing.
    const cold = await request(svr.port, '/doc/r', { headers: { range: 'bytes=0-1' } })
    assert.deepEqual([cold.status, cold.body, cold.headers['cache-status']], [206, '1:', 'svr; fwd=request; detail=range'])
    assert.equal((await request(svr.port, '/doc/r')).headers['cache-status'], 'svr; fwd=miss; stored')
    await fillsOver(svr)
    const whole = '1:' + BODY
    const part = async (headers) => {
      const res = await request(svr.port, '/doc/r', { headers })
      return [res.status, res.body, res.headers['content-range'], res.headers['content-length']]
    }
    assert.deepEqual(await part({ range: 'bytes=2-5' }), [206, '0123', 'bytes 2-5/38', '4'])
    assert.deepEqual(await part({ range: 'bytes=-3' }), [206, 'xyz', 'bytes 35-37/38', '3'])
    assert.deepEqual(await part({ range: 'bytes=30-' }), [206, whole.slice(30), 'bytes 30-37/38', '8'])
    assert.deepEqual(await part({ range: 'bytes=0-1,1-3' }), [206, '1:01', 'bytes 0-3/38', '4'])
    // Several ranges apart: the whole answer, as RFC 9110 allows.
    assert.deepEqual(await part({ range: 'bytes=0-1,10-12' }), [200, whole, undefined, '38'])
    assert.deepEqual(await part({ range: 'bytes=2-5', 'if-range': '"v1"' }), [206, '0123', 'bytes 2-5/38', '4'])
    assert.deepEqual(await part({ range: 'bytes=2-5', 'if-range': '"v0"' }), [200, whole, undefined, '38'])
    assert.deepEqual(await part({ range: 'bytes=2-5', 'if-range': LAST_MODIFIED }), [206, '0123', 'bytes 2-5/38', '4'])
    assert.deepEqual(await part({ range: 'bytes=2-5', 'if-range': 'Mon, 31 Aug 2026 10:00:00 GMT' }), [200, whole, undefined, '38'])
    assert.deepEqual(await part({ range: 'lines=1-2' }), [200, whole, undefined, '38'])
    const unsatisfiable = await request(svr.port, '/doc/r', { headers: { range: 'bytes=38-' } })
    assert.deepEqual([unsatisfiable.status, unsatisfiable.headers['content-range']], [416, 'bytes */38'])
    const head = await request(svr.port, '/doc/r', { method: 'HEAD' })
    assert.deepEqual([head.status, head.body, head.headers['content-length'], head.headers['accept-ranges'], head.headers['cache-status']],
      [200, '', '38', 'bytes', 'svr; hit'])
    assert.deepEqual(doc.seen, [['GET', '-', 'bytes=0-1'], ['GET', '-', '-']])
  })

  it('counts Age from the upstream\'s, plus the time stored', async (t) => {
    const upstream = await startUpstream(t, {
      handler (req, res) {
        res.writeHead(200, { 'Cache-Control': 'max-age=1000', Age: '100', 'Content-Type': 'text/plain' })
        res.end(BODY)
      }
    })
    const svr = await cachedSvr(t, { upstream })
    const missSent = Date.now()
    const miss = await request(svr.port, '/doc/aged')
    const missAnswered = Date.now()
    assert.deepEqual([miss.headers.age, miss.body], ['100', BODY])
    await fillsOver(svr)
    await sleep(2100)
    const hitSent = Date.now()
    const hit = await request(svr.port, '/doc/aged')
    const hitAnswered = Date.now()
    assert.match(hit.headers['cache-status'], /hit/)
    // Stored between the miss's sending and its answer; served between the hit's.
    const age = Number(hit.headers.age)
    assert.ok(age >= 100 + Math.floor((hitSent - missAnswered) / 1000) && age <= 100 + Math.floor((hitAnswered - missSent) / 1000),
      'Age ' + hit.headers.age + ' after ' + (hitAnswered - missSent) + ' ms')
    assert.ok(age >= 102)
  })

  it('revalidates a stale entry with its ETag, and keeps the body on a 304 with the 304\'s fields', async (t) => {
    const doc = await documentUpstream(t)
    const svr = await cachedSvr(t, doc)
    assert.equal((await request(svr.port, '/doc/v')).body, '1:' + BODY)
    await sleep(1100)
    const revalidated = await request(svr.port, '/doc/v')
    assert.deepEqual([revalidated.status, revalidated.body, revalidated.headers['cache-status'], revalidated.headers['x-revalidated']],
      [200, '1:' + BODY, 'svr; fwd=stale; fwd-status=304; stored', 'yes'])
    await fillsOver(svr)
    // Fresh again for another second: a hit, with the fields the 304 brought.
    const hit = await request(svr.port, '/doc/v')
    assert.deepEqual([hit.body, hit.headers['cache-status'], hit.headers['x-revalidated']], ['1:' + BODY, 'svr; hit', 'yes'])
    // A new version: the 304 does not come, and the new body replaces the old.
    doc.version = 2
    await sleep(1100)
    const changed = await request(svr.port, '/doc/v')
    assert.deepEqual([changed.body, changed.headers['cache-status']], ['2:' + BODY, 'svr; fwd=stale; stored'])
    assert.deepEqual(doc.seen, [['GET', '-', '-'], ['GET', '"v1"', '-'], ['GET', '"v1"', '-']])
    const metrics = (await request(svr.port, '/metrics')).body
    const sum = (result) => [...metrics.matchAll(new RegExp('\\nsvr_cache_requests_total\\{result="' + result + '",worker="\\d+"\\} (\\d+)', 'g'))]
      .reduce((total, match) => total + Number(match[1]), 0)
    assert.deepEqual([sum('stored'), sum('revalidated'), sum('hit')], [2, 1, 1])
  })

  it('stands in for an upstream\'s 5xx with a stale entry within staleIfError, and relays it after', async (t) => {
    const doc = await documentUpstream(t)
    const svr = await cachedSvr(t, doc, { staleIfError: 2 })
    assert.equal((await request(svr.port, '/doc/e')).status, 200)
    doc.status = 503
    await sleep(1100)
    const standIn = await request(svr.port, '/doc/e')
    assert.deepEqual([standIn.status, standIn.body, standIn.headers['cache-status']], [200, '1:' + BODY, 'svr; fwd=stale; fwd-status=503'])
    // Past the window the upstream's own answer goes through.
    await sleep(2000)
    const relayed = await request(svr.port, '/doc/e')
    assert.deepEqual([relayed.status, relayed.body], [503, 'upstream failure'])
  })

  it('never serves stale what says must-revalidate, whatever staleIfError allows', async (t) => {
    const doc = await documentUpstream(t, { cacheControl: 'max-age=1, must-revalidate' })
    const svr = await cachedSvr(t, doc, { staleIfError: 60 })
    assert.equal((await request(svr.port, '/doc/m')).status, 200)
    doc.status = 502
    await sleep(1100)
    const res = await request(svr.port, '/doc/m')
    assert.deepEqual([res.status, res.body], [502, 'upstream failure'])
  })

  it('says an answer over maxEntrySize by its Content-Length is not stored, and fetches it each time', async (t) => {
    const doc = await documentUpstream(t, { cacheControl: 'max-age=60' })
    const svr = await cachedSvr(t, doc, {}, { responseCache: { maxEntrySize: 20 } })
    const statuses = []
    for (let i = 0; i < 2; i++) {
      const res = await request(svr.port, '/doc/big')
      statuses.push([res.body.length, res.headers['cache-status']])
      await fillsOver(svr)
    }
    assert.deepEqual(statuses, [[38, 'svr; fwd=miss'], [38, 'svr; fwd=miss']])
    assert.equal(doc.seen.length, 2)
  })

  it('drops what is stored of a URL once a POST, PUT or DELETE to it succeeds, not after an error', async (t) => {
    const doc = await documentUpstream(t, { cacheControl: 'max-age=60' })
    const svr = await cachedSvr(t, doc, {}, { metricsPath: '/metrics' })
    const stored = async () => {
      assert.equal((await request(svr.port, '/doc/u')).headers['cache-status'], 'svr; fwd=miss; stored')
      await fillsOver(svr)
      assert.equal((await request(svr.port, '/doc/u')).headers['cache-status'], 'svr; hit')
    }
    await stored()
    // The upstream fails the first POST: the entry stays.
    doc.status = 500
    assert.equal((await request(svr.port, '/doc/u', { method: 'POST', body: 'x=1' })).status, 500)
    await sleep(150)
    assert.equal((await request(svr.port, '/doc/u')).headers['cache-status'], 'svr; hit')
    doc.status = 0
    for (const method of ['POST', 'DELETE']) {
      const changed = await request(svr.port, '/doc/u', { method, body: 'x=1' })
      assert.deepEqual([changed.status, changed.headers['cache-status']], [200, 'svr; fwd=method'])
      // Dropped a moment later (the primary removes the file, then tells the workers).
      await waitUntil(async () => (await request(svr.port, '/doc/u')).headers['cache-status'] === 'svr; fwd=miss; stored', 'the entry is dropped after ' + method)
      await fillsOver(svr)
      assert.equal((await request(svr.port, '/doc/u')).headers['cache-status'], 'svr; hit')
    }
    assert.match((await request(svr.port, '/metrics')).body, /\nsvr_cache_purged_total\{source="unsafe"\} 2\n/)
  })
})
