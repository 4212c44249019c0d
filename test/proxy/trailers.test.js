'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const http2 = require('node:http2')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { rawRequest } = require('../helpers/raw-http')
const { startUpstream } = require('../helpers/upstream')
const { makeCertificate, http2SiteConfig, connectH2, plainPort } = require('../helpers/tls')
const { whenListening } = require('../../lib/listen')

// An HTTP/1.1 upstream: a chunked body (the TE it got), then trailers.
function withTrailers (req, res) {
  req.resume()
  res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'X-Checksum, X-Count' })
  res.write('te=' + (req.headers.te ?? 'none'))
  res.addTrailers({ 'X-Checksum': 'abc123', 'X-Count': '1' })
  res.end()
}

/**
 * A cleartext HTTP/2 upstream (no HTTP/1.1 at all) in the test process.
 * @param {object} t node:test context (or scope)
 * @param {(stream: http2.ServerHttp2Stream, headers: object) => void} onStream
 * @returns {Promise<{server: http2.Http2Server, origin: string}>}
 */
async function startH2cUpstream (t, onStream) {
  const server = http2.createServer()
  const sessions = new Set()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  server.on('stream', onStream)
  await whenListening(server, () => server.listen(0, '127.0.0.1'))
  const stop = () => new Promise((resolve) => {
    for (const session of sessions) session.destroy()
    server.close(resolve)
  })
  t.after(stop)
  return { server, origin: 'h2c://127.0.0.1:' + server.address().port, stop }
}

// Sends `size` bytes in 4 KiB writes (as the window allows), then trailers.
function bigThenTrailers (size) {
  return (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' }, { waitForTrailers: true })
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-sent': String(size) }))
    let sent = 0
    const more = () => {
      while (sent < size) {
        sent += 4096
        if (!stream.write(Buffer.alloc(4096, 7))) {
          stream.once('drain', more)
          return
        }
      }
      stream.end()
    }
    more()
  }
}

/**
 * One HTTP/2 request, read whole (slowly with `pauseMs`: the stream is
 * paused that long after each chunk), with its trailers.
 * @returns {Promise<{status: number, headers: object, body: Buffer, trailers: object|null}>}
 */
function h2Get (session, path, headers = {}, pauseMs = 0) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ...headers })
    const chunks = []
    let head = null
    let trailers = null
    stream.on('response', (fields) => { head = fields })
    stream.on('trailers', (fields) => { trailers = Object.fromEntries(Object.entries(fields)) })
    stream.on('data', (chunk) => {
      chunks.push(chunk)
      if (pauseMs === 0) return
      stream.pause()
      setTimeout(() => stream.resume(), pauseMs)
    })
    stream.on('end', () => resolve({ status: head[':status'], headers: head, body: Buffer.concat(chunks), trailers }))
    stream.on('error', reject)
  })
}

describe('proxy trailers and TE', () => {
  const scope = createScope()
  let svr
  let session
  before(async () => {
    const h1 = await startUpstream(scope, { handler: withTrailers })
    const empty = await startH2cUpstream(scope, (stream) => {
      // Headers, no data, then trailers: a gRPC answer with no message.
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'fine' }))
      stream.end()
    })
    const big = await startH2cUpstream(scope, bigThenTrailers(600 * 1024))
    const site = await makeSite(scope)
    const cert = await makeCertificate(site.dir, 'svr', ['localhost', '127.0.0.1'])
    await site.writeConfig(http2SiteConfig(cert, {
      disableNonEncryptedServer: false,
      disableToHTTPSRedirect: true,
      proxy: [
        { path: '/h1', upstreams: [h1.origin] },
        { path: '/empty', upstreams: [empty.origin] },
        { path: '/big', upstreams: [big.origin] }
      ]
    }))
    svr = await startSvr(scope, site.configFile)
    session = await connectH2(svr.port)
  })
  after(async () => {
    if (session) session.close()
    await scope.cleanup()
  })

  it('should pass an HTTP/1.1 upstream\'s trailers to an HTTP/2 client, and TE: trailers to the upstream', async () => {
    const res = await h2Get(session, '/h1', { te: 'trailers' })
    assert.equal(res.status, 200)
    assert.equal(res.body.toString(), 'te=trailers')
    assert.deepEqual(res.trailers, { 'x-checksum': 'abc123', 'x-count': '1' })
  })

  it('should forward TE as "trailers" alone, and only when the client names it', async () => {
    const plain = await plainPort(svr)
    const sent = async (te) => {
      const res = await rawRequest(plain, 'GET /h1 HTTP/1.1\r\nHost: localhost\r\nTE: ' + te + '\r\nConnection: TE, close\r\n\r\n')
      return /te=([^\r\n]*)/.exec(res.body)[1]
    }
    assert.equal(await sent('gzip, Trailers;q=0.5'), 'trailers')
    assert.equal(await sent('gzip'), 'none')
    assert.equal(await sent('trailersx'), 'none')
  })

  it('should pass an upstream\'s trailers to an HTTP/1.1 client in a chunked response', async () => {
    const res = await rawRequest(await plainPort(svr), 'GET /h1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    assert.equal(res.headers['transfer-encoding'], 'chunked')
    assert.equal(res.body, '7\r\nte=none\r\n0\r\nx-checksum: abc123\r\nx-count: 1\r\n\r\n')
  })

  it('should pass an HTTP/2 upstream\'s trailers on after a head without body', async () => {
    const res = await h2Get(session, '/empty', { te: 'trailers' })
    assert.deepEqual([res.status, res.headers['content-type'], res.body.length], [200, 'application/grpc', 0])
    assert.deepEqual(res.trailers, { 'grpc-status': '0', 'grpc-message': 'fine' })
  })

  it('should give a slow client all of an HTTP/2 upstream\'s answer and its trailers', async () => {
    const res = await h2Get(session, '/big', { te: 'trailers' }, 2)
    assert.equal(res.body.length, 600 * 1024)
    assert.deepEqual(res.trailers, { 'x-sent': String(600 * 1024) })
  })
})

describe('proxy h2c:// upstreams', () => {
  it('should check an h2c upstream\'s health over HTTP/2', async (t) => {
    let checks = 0
    const upstream = await startH2cUpstream(t, (stream, headers) => {
      if (headers[':path'] === '/health') checks++
      stream.respond({ ':status': 200 })
      stream.end('ok')
    })
    const site = await makeSite(t, {
      workers: 1,
      proxy: [{ path: '/', upstreams: [upstream.origin], healthCheck: { path: '/health', interval: 100, timeout: 500, rise: 1, fall: 1 } }]
    })
    const svr = await startSvr(t, site.configFile)
    for (const end = Date.now() + 5000; checks < 3 && Date.now() < end;) await sleep(20)
    assert.ok(checks >= 3, 'checks that reached the upstream: ' + checks)
    assert.doesNotMatch(svr.output, /unhealthy/)
    await upstream.stop()
    await svr.waitFor(/proxy upstream h2c:\/\/127\.0\.0\.1:\d+ is unhealthy after 1 failed checks of \/health: ECONNREFUSED/)
  })

  it('should refuse a protocol upgrade on a route whose upstreams may speak HTTP/2', async (t) => {
    let streams = 0
    const upstream = await startH2cUpstream(t, (stream) => {
      streams++
      stream.respond({ ':status': 200 })
      stream.end()
    })
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    const res = await rawRequest(svr.port, 'GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n')
    assert.equal(res.status, 501)
    assert.equal(streams, 0)
    await svr.waitFor(/request \S+: protocol upgrades are not forwarded on proxy route 0, whose upstreams may speak HTTP\/2/)
    // Ordinary requests go through.
    const plain = await new Promise((resolve, reject) => http.get({ port: svr.port, path: '/x', host: '127.0.0.1' }, resolve).on('error', reject))
    plain.resume()
    assert.equal(plain.statusCode, 200)
    assert.equal(streams, 1)
  })
})
