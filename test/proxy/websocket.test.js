'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http2 = require('node:http2')
const { WebSocket } = require('undici')
const { makeSite, startSvr } = require('../helpers/server')
const { rawRequest } = require('../helpers/raw-http')
const { startWebSocketUpstream } = require('../helpers/websocket-upstream')
const { makeCertificate, h2Request } = require('../helpers/tls')

const HANDSHAKE = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'

// How the upstream of the refusal tests answers a handshake, by its target:
// hop-by-hop fields (Connection and the one it names, Keep-Alive, Upgrade)
// must not reach the client, X-Reason must.
function refuseHandshake (req) {
  const hopByHop = 'Connection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nUpgrade: websocket\r\n'
  switch (req.url) {
    case '/ws/forbidden':
      return 'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 8\r\nX-Reason: banned\r\n' + hopByHop + '\r\ngo away\n'
    case '/ws/moved':
      return 'HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n' + hopByHop + '\r\n'
    case '/ws/plain':
      return 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nplain'
    case '/ws/garbage':
      return 'this is not HTTP\r\n\r\n'
    default:
      return null
  }
}

// The fields a client must get from refuseHandshake's answers, and must not.
function assertPassedOn (headers) {
  assert.deepEqual([headers['x-reason'], headers['x-hop'], headers['keep-alive'], headers.upgrade, headers.via],
    ['banned', undefined, undefined, undefined, '1.1 svr'])
}

// A client's text frame: masked, as RFC 6455 requires of clients.
function maskedFrame (opcode, text) {
  const payload = Buffer.from(text)
  const mask = Buffer.from([1, 2, 3, 4])
  const masked = payload.map((byte, i) => byte ^ mask[i % 4])
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, masked])
}

// An HTTP/2 session that has the server's SETTINGS.
function connectHttp2 (t, port) {
  const session = http2.connect('https://localhost:' + port, { rejectUnauthorized: false })
  t.after(() => session.close())
  return new Promise((resolve, reject) => {
    session.once('remoteSettings', (settings) => resolve({ session, settings }))
    session.once('error', reject)
  })
}

// The answer on an HTTP/2 stream, once the stream is closed.
function closedStream (stream) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let headers = null
    stream.on('response', (h) => { headers = h })
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('error', reject)
    stream.on('close', () => resolve({ status: headers && headers[':status'], headers, body: Buffer.concat(chunks), rstCode: stream.rstCode }))
  })
}

// Open a WebSocket, send each message, collect the answers, close.
function converse (url, messages) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const answers = []
    ws.addEventListener('open', () => { for (const message of messages) ws.send(message) })
    ws.addEventListener('message', (event) => {
      answers.push(event.data)
      if (answers.length === messages.length) ws.close(1000)
    })
    ws.addEventListener('close', (event) => resolve({ answers, code: event.code }))
    ws.addEventListener('error', (event) => reject(event.error || new Error('WebSocket error')))
  })
}

// svr over TLS with HTTP/2, its /ws route proxied to the upstream.
async function startSecureProxy (t, upstream) {
  const site = await makeSite(t, { workers: 1 })
  const tls = await makeCertificate(site.dir, 'server')
  await site.writeConfig({
    workers: 1, secure: true, enableHTTP2: true, sport: '127.0.0.1:0', disableNonEncryptedServer: true, cert: tls.cert, key: tls.key,
    proxy: [{ path: '/ws', upstreams: [upstream.origin] }]
  })
  return startSvr(t, site.configFile)
}

describe('proxy WebSocket pass-through', () => {
  it('should tunnel a WebSocket over HTTP/1.1 to the upstream and back', async (t) => {
    const upstream = await startWebSocketUpstream(t)
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/ws', stripPrefix: true, upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    const result = await converse('ws://127.0.0.1:' + svr.port + '/ws/chat?room=1', ['hello', 'second'])
    assert.deepEqual(result, { answers: ['echo: hello', 'echo: second'], code: 1000 })
    assert.equal(upstream.handshakes.length, 1)
    const seen = upstream.handshakes[0]
    assert.equal(seen['x-forwarded-for'], '127.0.0.1')
    assert.equal(seen.via, '1.1 svr')
    assert.equal(seen.upgrade, 'websocket')
    assert.equal(seen.connection, 'upgrade')
    assert.equal(seen['sec-websocket-version'], '13')
  })

  it('should answer an Upgrade request outside proxy routes as a plain request and close', async (t) => {
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/ws', upstreams: ['http://127.0.0.1:9'] }] })
    const svr = await startSvr(t, site.configFile)
    const res = await rawRequest(svr.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
    assert.equal(res.status, 200)
    assert.equal(res.headers.connection, 'close')
    assert.equal(res.body, '<h1>test index</h1>\n')
    // A route whose upstream is unreachable: the usual 502, then the connection closes.
    const refused = await rawRequest(svr.port, 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
    assert.deepEqual([refused.status, refused.headers.connection], [502, 'close'])
  })
  it('should tunnel a WebSocket from an HTTP/2 client (extended CONNECT) to an HTTP/1.1 upstream', async (t) => {
    const upstream = await startWebSocketUpstream(t)
    const svr = await startSecureProxy(t, upstream)
    const { session, settings } = await connectHttp2(t, svr.port)
    assert.equal(settings.enableConnectProtocol, true)
    const stream = session.request({
      ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'https', ':path': '/ws/chat', ':authority': 'localhost:' + svr.port, 'sec-websocket-version': '13'
    })
    const [headers] = await new Promise((resolve, reject) => {
      stream.once('response', (...args) => resolve(args))
      stream.once('error', reject)
    })
    assert.equal(headers[':status'], 200)
    assert.equal(headers['sec-websocket-accept'], undefined)
    const received = []
    stream.on('data', (chunk) => received.push(chunk))
    stream.write(maskedFrame(1, 'over h2'))
    stream.write(maskedFrame(8, ''))
    await new Promise((resolve) => stream.once('end', resolve))
    const echo = Buffer.from('echo: over h2')
    assert.deepEqual(Buffer.concat(received), Buffer.concat([Buffer.from([0x81, echo.length]), echo, Buffer.from([0x88, 0])]))
    assert.equal(upstream.handshakes.length, 1)
    assert.equal(upstream.handshakes[0].via, '2 svr')
    assert.equal(upstream.handshakes[0]['sec-websocket-version'], '13')
    assert.match(upstream.handshakes[0]['sec-websocket-key'], /^[A-Za-z0-9+/]{22}==$/)
  })

  it('should pass an upstream\'s answer other than 101 on to an HTTP/1.1 client, then close the connection', async (t) => {
    const upstream = await startWebSocketUpstream(t, { answer: refuseHandshake })
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/ws', upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    // A second request behind the handshake on the same connection: it must
    // not be answered, the connection carries nothing after the refusal.
    const res = await rawRequest(svr.port, 'GET /ws/forbidden HTTP/1.1\r\nHost: x\r\n' + HANDSHAKE + '\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n')
    assert.equal(res.status, 403)
    assert.equal(res.body, 'go away\n')
    assert.equal(res.raw.split('HTTP/1.1 ').length, 2, res.raw)
    assert.deepEqual([res.headers['content-type'], res.headers['content-length'], res.headers.connection], ['text/plain', '8', 'close'])
    assertPassedOn(res.headers)
    await svr.waitFor(new RegExp('"GET /ws/forbidden HTTP/1.1" 403 8 "-" "-" "' + res.headers['x-request-id'] + '" upstream=' +
      upstream.origin.replace(/[.]/g, '\\.') + ' upstream_time=\\d+\\.\\d{3}\\n'))
    const moved = await rawRequest(svr.port, 'GET /ws/moved HTTP/1.1\r\nHost: x\r\n' + HANDSHAKE + '\r\n')
    assert.deepEqual([moved.status, moved.headers.location, moved.headers.connection, moved.body], [302, '/elsewhere', 'close', ''])
    // An upstream that is not speaking HTTP is still a 502.
    const garbage = await rawRequest(svr.port, 'GET /ws/garbage HTTP/1.1\r\nHost: x\r\n' + HANDSHAKE + '\r\n')
    assert.deepEqual([garbage.status, garbage.headers.connection], [502, 'close'])
  })

  it('should end an HTTP/2 extended CONNECT with the upstream\'s answer other than 101', async (t) => {
    const upstream = await startWebSocketUpstream(t, { answer: refuseHandshake })
    const svr = await startSecureProxy(t, upstream)
    const { session } = await connectHttp2(t, svr.port)
    const connect = (path) => closedStream(session.request({
      ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'https', ':path': path, ':authority': 'localhost:' + svr.port, 'sec-websocket-version': '13'
    }))
    // The client's side stays open: the server ends the stream by itself (RST_STREAM NO_ERROR after its answer).
    const refused = await connect('/ws/forbidden')
    assert.deepEqual([refused.status, refused.rstCode], [403, http2.constants.NGHTTP2_NO_ERROR])
    assert.equal(refused.body.toString(), 'go away\n')
    assert.equal(refused.headers['content-type'], 'text/plain')
    assertPassedOn(refused.headers)
    await svr.waitFor(new RegExp('"CONNECT /ws/forbidden HTTP/2.0" 403 8 "-" "-" "' + refused.headers['x-request-id'] + '" upstream=' +
      upstream.origin.replace(/[.]/g, '\\.') + ' upstream_time=\\d+\\.\\d{3}\\n'))
    // A 2xx would tell the client its tunnel is open: an upstream's 200 without switching is a 502.
    const plain = await connect('/ws/plain')
    assert.equal(plain.status, 502)
    // The session goes on.
    const index = await h2Request(session, { ':path': '/', ':authority': 'localhost:' + svr.port })
    assert.equal(index.status, 200)
  })
})
