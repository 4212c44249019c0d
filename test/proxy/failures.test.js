'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { startUpstream } = require('../helpers/upstream')

const PAGES = { 'e502.html': '<p>custom 502</p>\n', 'e503.html': '<p>custom 503</p>\n', 'e504.html': '<p>custom 504</p>\n' }
const ERROR_PAGES = [{ scode: 502, path: 'e502.html' }, { scode: 503, path: 'e503.html' }, { scode: 504, path: 'e504.html' }]

// A port nothing listens on: an upstream's, once it has stopped.
async function closedPort (t) {
  const upstream = await startUpstream(t)
  await upstream.stop()
  return upstream.port
}

// An upstream that writes `answer` on every connection, then `after`
// ('close', 'destroy' or 'hang').
async function rawUpstream (t, answer, after) {
  const sockets = new Set()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.once('data', () => {
      if (answer !== '') socket.write(answer)
      if (after === 'destroy') socket.destroy()
      else if (after === 'close') socket.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return 'http://127.0.0.1:' + server.address().port
}

describe('proxy failures', () => {
  it('should answer 502, 504 and 503 with Retry-After through the configured error pages', async (t) => {
    const refused = 'http://127.0.0.1:' + await closedPort(t)
    const refusedOne = 'http://127.0.0.1:' + await closedPort(t)
    const refusedToo = 'http://127.0.0.1:' + await closedPort(t)
    const stalling = await rawUpstream(t, '', 'hang')
    const site = await makeSite(t, {
      workers: 1,
      errorPages: ERROR_PAGES,
      proxy: [
        { path: '/refused', upstreams: [refused], maxFails: 0 },
        { path: '/stall', upstreams: [stalling], firstByteTimeout: 300, maxFails: 0 },
        // Both out by the primary's checks: each request still tries them,
        // and when neither can be reached, 503 until the next check.
        { path: '/down', upstreams: [refusedOne, refusedToo], healthCheck: { interval: 3000, fall: 1 } }
      ]
    }, PAGES)
    const svr = await startSvr(t, site.configFile)
    const refusedAnswer = await request(svr.port, '/refused')
    assert.deepEqual([refusedAnswer.status, refusedAnswer.body], [502, PAGES['e502.html']])
    const stalled = await request(svr.port, '/stall')
    assert.deepEqual([stalled.status, stalled.body], [504, PAGES['e504.html']])
    await svr.waitFor(new RegExp('proxy upstream ' + refusedToo + ' is unhealthy after 1 failed checks'))
    await svr.waitFor(new RegExp('proxy upstream ' + refusedOne + ' is unhealthy after 1 failed checks'))
    let down
    for (let i = 0; i < 50; i++) {
      down = await request(svr.port, '/down')
      if (down.status === 503) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.deepEqual([down.status, down.body], [503, PAGES['e503.html']])
    // The seconds until the primary's next check, not a fixed cool-down.
    assert.ok(['1', '2', '3'].includes(down.headers['retry-after']), down.headers['retry-after'])
    // Each request tried both, as neither was up.
    const id = down.headers['x-request-id']
    await svr.waitFor(new RegExp('request ' + id + ': upstream'))
    assert.equal(svr.output.split('request ' + id + ': upstream').length - 1, 2)
  })

  it('should survive upstreams that send invalid or huge headers or close mid-body', async (t) => {
    const good = await startUpstream(t, { name: 'good' })
    const invalid = await rawUpstream(t, 'HTTP/1.1 200 OK\r\nBad Header\x01: x\r\nContent-Length: 2\r\n\r\nok', 'close')
    const huge = await rawUpstream(t, 'HTTP/1.1 200 OK\r\nX-Big: ' + 'a'.repeat(200000) + '\r\nContent-Length: 2\r\n\r\nok', 'close')
    const cut = await rawUpstream(t, 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789', 'destroy')
    const notHttp = await rawUpstream(t, 'SSH-2.0-OpenSSH_9.2\r\n', 'close')
    const site = await makeSite(t, {
      workers: 1,
      proxy: ['invalid', 'huge', 'cut', 'nothttp'].map((name, i) => ({ path: '/' + name, upstreams: [[invalid, huge, cut, notHttp][i]], maxFails: 0 }))
        .concat({ path: '/good', upstreams: [good.origin] })
    })
    const svr = await startSvr(t, site.configFile)
    const pids = svr.workerPids()
    assert.equal((await request(svr.port, '/invalid')).status, 502)
    assert.equal((await request(svr.port, '/huge')).status, 502)
    assert.equal((await request(svr.port, '/nothttp')).status, 502)
    // The status line went out: the client sees the response cut short.
    const cutShort = await rawRequest(svr.port, 'GET /cut HTTP/1.1\r\nHost: x\r\n\r\n')
    assert.equal(cutShort.status, 200)
    assert.equal(cutShort.body, '0123456789')
    const after = await request(svr.port, '/good')
    assert.equal(after.status, 200)
    assert.equal(JSON.parse(after.body).name, 'good')
    assert.deepEqual(svr.workerPids(), pids)
    assert.doesNotMatch(svr.output, /uncaught|exited/i)
  })

  it('should send a request no upstream got to the next one, body and all, and not one that was partly sent', async (t) => {
    const dead = 'http://127.0.0.1:' + await closedPort(t)
    const bodies = []
    const alive = await startUpstream(t, {
      name: 'alive',
      handler (req, res) {
        const chunks = []
        req.on('data', (chunk) => chunks.push(chunk))
        req.on('end', () => {
          bodies.push(Buffer.concat(chunks).toString())
          res.end('alive')
        })
      }
    })
    // Reads the head and the start of the body, then resets the connection.
    const partial = await rawUpstream(t, '', 'destroy')
    const site = await makeSite(t, {
      workers: 1,
      proxy: [
        // A body limit has svr count a chunked body's bytes on the way.
        { path: '/dead', upstreams: [dead, alive.origin], maxFails: 0, maxBodySize: 1048576 },
        { path: '/partial', upstreams: [partial, alive.origin], maxFails: 0 }
      ]
    })
    const svr = await startSvr(t, site.configFile)
    // Round robin starts with the first upstream, the refusing one.
    const get = await request(svr.port, '/dead/x')
    assert.deepEqual([get.status, get.body], [200, 'alive'])
    // This one's turn is the live upstream; the next two are the refusing
    // one's, and go on to the next, each body whole.
    const first = await request(svr.port, '/dead/x', { method: 'POST', body: 'direct' })
    assert.deepEqual([first.status, first.body], [200, 'alive'])
    const post = await request(svr.port, '/dead/x', { method: 'POST', body: 'x'.repeat(100000) })
    assert.deepEqual([post.status, post.body], [200, 'alive'])
    await request(svr.port, '/dead/x', { method: 'POST', body: 'direct' })
    const chunked = await request(svr.port, '/dead/x', { method: 'POST', body: 'chunked payload', headers: { 'transfer-encoding': 'chunked' } })
    assert.deepEqual([chunked.status, chunked.body], [200, 'alive'])
    assert.deepEqual(bodies, ['', 'direct', 'x'.repeat(100000), 'direct', 'chunked payload'])
    // The upstream read part of this body: it may have acted on it, so no second upstream gets it.
    const partly = await request(svr.port, '/partial/x', { method: 'POST', body: 'y'.repeat(100000) })
    assert.equal(partly.status, 502)
    assert.equal(alive.hits, 5)
    const id = partly.headers['x-request-id']
    await svr.waitFor(new RegExp('request ' + id + ': upstream'))
    assert.equal(svr.output.split('request ' + id + ': upstream').length - 1, 1)
  })

  it('should try at most retries more upstreams', async (t) => {
    const dead = []
    for (let i = 0; i < 3; i++) dead.push('http://127.0.0.1:' + await closedPort(t))
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/', upstreams: dead, retries: 1, maxFails: 0 }] })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/x')
    assert.equal(res.status, 502)
    const id = res.headers['x-request-id']
    await svr.waitFor(new RegExp('request ' + id + ': upstream'))
    assert.equal(svr.output.split('request ' + id + ': upstream').length - 1, 2)
  })

  it('should refuse a body over the route\'s maxBodySize with 413', async (t) => {
    const upstream = await startUpstream(t)
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin], maxBodySize: 10 }] })
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/', { method: 'POST', body: 'x'.repeat(10) })).status, 200)
    assert.equal((await request(svr.port, '/', { method: 'POST', body: 'x'.repeat(11) })).status, 413)
    assert.equal(upstream.hits, 1)
    const chunked = await rawRequest(svr.port, 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n14\r\n' + 'y'.repeat(20) + '\r\n0\r\n\r\n')
    assert.equal(chunked.status, 413)
  })
  it('should cancel the upstream request when the client goes away before the answer', async (t) => {
    let closed = null
    const upstreamClosed = new Promise((resolve) => { closed = resolve })
    const upstream = await startUpstream(t, {
      handler (req) {
        // Never answers; the proxy must hang up when its client does.
        req.socket.once('close', closed)
      }
    })
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin], firstByteTimeout: 60000 }] })
    const svr = await startSvr(t, site.configFile)
    const socket = net.connect(svr.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n')
    while (upstream.hits === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    socket.destroy()
    // Without the cancel the upstream's connection stays until firstByteTimeout (60 s).
    const outcome = await Promise.race([upstreamClosed.then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 5000, 'still open'))])
    assert.equal(outcome, 'closed')
    assert.equal(upstream.hits, 1)
  })
})
