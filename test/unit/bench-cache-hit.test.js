'use strict'

// bench/cache-hit.js: the cache-hit row is timed only once its answers are
// hits; a server whose answers are not (no entry stored, a worker that
// misses) stops the row with what it answered.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { expectCacheHits } = require('../../bench/cache-hit')

const WORKLOAD = { name: 'cache-hit-1k', target: '/cached/1k' }

// A server answering its nth request (from 1) with answerOf(n).
async function serverAnswering (t, answerOf) {
  let count = 0
  const server = http.createServer((req, res) => {
    const { status, cacheStatus } = answerOf(++count)
    if (cacheStatus !== undefined) res.setHeader('Cache-Status', cacheStatus)
    res.writeHead(status)
    res.end('x'.repeat(1024))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  return { name: 'svr', port: server.address().port, requests: () => count }
}

describe('bench cache-hit check', () => {
  it('passes once the entry is filled and every later answer is a hit', async (t) => {
    // Filled by the first request, found from the third on.
    const target = await serverAnswering(t, (n) => ({ status: 200, cacheStatus: n <= 2 ? 'svr; fwd=miss; stored' : 'svr; hit' }))
    await expectCacheHits(target, WORKLOAD, { checks: 4 })
    assert.equal(target.requests(), 3 + 4)
  })

  it('fails, saying what was answered, when no answer is ever a hit', async (t) => {
    const target = await serverAnswering(t, () => ({ status: 200, cacheStatus: 'svr; fwd=miss' }))
    await assert.rejects(expectCacheHits(target, WORKLOAD, { fillTimeoutMs: 100 }),
      /^Error: cache-hit-1k: svr answered \/cached\/1k with 200 and Cache-Status "svr; fwd=miss" \(still after 100 ms of requests\), not with a hit/)
  })

  it('fails when an answer after the first hit is not one (a worker without the entry)', async (t) => {
    const target = await serverAnswering(t, (n) => ({ status: 200, cacheStatus: n === 4 ? 'svr; fwd=miss' : 'svr; hit' }))
    await assert.rejects(expectCacheHits(target, WORKLOAD, { checks: 6 }), /\(request 3 of 6 after the entry was filled\)/)
  })

  it('fails on a hit that is not a 200, and on an answer without Cache-Status', async (t) => {
    const notFound = await serverAnswering(t, () => ({ status: 404, cacheStatus: 'svr; hit' }))
    await assert.rejects(expectCacheHits(notFound, WORKLOAD, { fillTimeoutMs: 50 }), /with 404 and Cache-Status "svr; hit"/)
    const uncached = await serverAnswering(t, () => ({ status: 200 }))
    await assert.rejects(expectCacheHits(uncached, WORKLOAD, { fillTimeoutMs: 50 }), /with 200 and Cache-Status \(none\)/)
  })
})
