'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http2 = require('node:http2')
const net = require('node:net')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { makeCertificate, http2SiteConfig, connectH2 } = require('../helpers/tls')
const { grpc, jsonMethod, startGrpcServer, echoClient, unary } = require('../helpers/grpc')

// What the test service's handlers saw, by the request's `tag`.
const seen = new Map()

function note (tag, fact) {
  const facts = seen.get(tag) || {}
  seen.set(tag, Object.assign(facts, fact))
}

// Wait until a handler noted `key` for `tag` (a cancellation comes a
// moment after the client's error).
async function noted (tag, key, timeout = 5000) {
  const end = Date.now() + timeout
  while (Date.now() < end) {
    const facts = seen.get(tag)
    if (facts !== undefined && key in facts) return facts[key]
    await sleep(10)
  }
  throw new Error('the upstream never noted ' + key + ' for ' + tag)
}

const HANDLERS = {
  // {tag, sleep?: ms, fail?: text}: the request back, after `sleep`, or
  // NOT_FOUND with `fail` as its message.
  Unary (call, callback) {
    const { tag } = call.request
    note(tag, { deadline: call.getDeadline() })
    call.on('cancelled', () => note(tag, { cancelled: true }))
    const answer = () => {
      if (call.request.fail !== undefined) {
        const trailers = new grpc.Metadata()
        trailers.set('x-reason', 'missing')
        callback({ code: grpc.status.NOT_FOUND, details: call.request.fail, metadata: trailers })
        return
      }
      callback(null, { echo: call.request, client: call.metadata.get('x-client') })
    }
    if (call.request.sleep === undefined) answer()
    else setTimeout(answer, call.request.sleep).unref()
  },
  // {count}: count messages, then trailers with x-count.
  List (call) {
    for (let i = 0; i < call.request.count; i++) call.write({ i })
    const trailers = new grpc.Metadata()
    trailers.set('x-count', String(call.request.count))
    call.end(trailers)
  },
  // Each message back as it comes.
  Chat (call) {
    call.on('data', (message) => call.write({ back: message }))
    call.on('end', () => call.end())
  }
}

// The status a call ended with, its messages and trailing metadata; a
// failure when it has not ended within 10 s.
function streamed (call) {
  return new Promise((resolve, reject) => {
    const messages = []
    const timer = setTimeout(() => {
      call.cancel()
      reject(new Error('the call did not end within 10 s'))
    }, 10000)
    call.on('data', (message) => messages.push(message))
    call.on('error', () => {})
    call.on('status', (status) => {
      clearTimeout(timer)
      resolve({ code: status.code, details: status.details, metadata: status.metadata.getMap(), messages })
    })
  })
}

// The next message of a stream, or a failure after `timeout`.
function nextMessage (call, timeout = 5000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message within ' + timeout + ' ms')), timeout)
    call.once('data', (message) => {
      clearTimeout(timer)
      resolve(message)
    })
  })
}

describe('gRPC through the proxy, to an h2c:// upstream', () => {
  const scope = createScope()
  let svr
  let client
  let certFile
  before(async () => {
    const upstream = await startGrpcServer(scope, HANDLERS)
    const site = await makeSite(scope)
    const cert = await makeCertificate(site.dir, 'svr', ['localhost', '127.0.0.1'])
    certFile = cert.cert
    await site.writeConfig(http2SiteConfig(cert, { proxy: [{ path: '/svr.test.Echo/', upstreams: ['h2c://127.0.0.1:' + upstream.port] }] }))
    svr = await startSvr(scope, site.configFile)
    client = echoClient(scope, svr.port, certFile)
  })
  after(() => scope.cleanup())

  it('should answer a unary call, with the client\'s metadata', async () => {
    const metadata = new grpc.Metadata()
    metadata.set('x-client', 'test')
    const { value, error } = await unary(client, { tag: 'unary' }, {}, metadata)
    assert.equal(error, null)
    assert.deepEqual(value, { echo: { tag: 'unary' }, client: ['test'] })
    // No deadline was set: none reaches the upstream.
    assert.equal(await noted('unary', 'deadline'), Infinity)
  })

  it('should stream a server\'s messages and pass its trailers on', async () => {
    const result = await streamed(client.List({ count: 5 }))
    assert.deepEqual(result, {
      code: grpc.status.OK,
      details: 'OK',
      metadata: { 'x-count': '5' },
      messages: [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }]
    })
  })

  it('should carry a bidirectional stream in full duplex', async () => {
    const call = client.Chat()
    const status = streamed(call)
    // Each answer comes before the next message is sent: nothing waits for
    // the client's half of the stream to end.
    for (let i = 0; i < 4; i++) {
      call.write({ n: i })
      assert.deepEqual(await nextMessage(call), { back: { n: i } })
    }
    call.end()
    assert.equal((await status).code, grpc.status.OK)
  })

  it('should pass an upstream\'s error status, message and trailing metadata on', async () => {
    const { error } = await unary(client, { tag: 'fail', fail: 'no such thing: 100% été' })
    assert.equal(error.code, grpc.status.NOT_FOUND)
    assert.equal(error.details, 'no such thing: 100% été')
    assert.deepEqual(error.metadata.get('x-reason'), ['missing'])
  })

  it('should give the upstream the call\'s deadline, and cut its call when the deadline passes', async () => {
    const deadline = Date.now() + 600
    const { error } = await unary(client, { tag: 'late', sleep: 3000 }, { deadline })
    assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED)
    // grpc-timeout went upstream: the server works to (nearly) the client's
    // deadline. The upstream counts it from when the call reached it, so its
    // deadline is later by the time through the proxy: 72 ms once on a
    // loaded CI machine.
    const theirs = Number(await noted('late', 'deadline'))
    assert.ok(theirs <= deadline + 400 && theirs > deadline - 1000, 'upstream deadline ' + theirs + ', client\'s ' + deadline)
    assert.equal(await noted('late', 'cancelled'), true)
  })

  it('should cut the upstream\'s call when the client cancels it', async () => {
    const call = client.Unary({ tag: 'cancelled', sleep: 30000 }, () => {})
    await noted('cancelled', 'deadline')
    call.cancel()
    // The upstream's deadline is far: only svr's reset can cancel it.
    assert.equal(await noted('cancelled', 'cancelled'), true)
  })

  it('should answer a call no route takes with UNIMPLEMENTED, not a page', async (t) => {
    const Other = grpc.makeGenericClientConstructor({ Ping: jsonMethod('/svr.test.Other/Ping', false, false) }, 'Other')
    const other = echoClient(t, svr.port, certFile, { Client: Other })
    const error = await new Promise((resolve) => other.Ping({}, (err) => resolve(err)))
    // A POST to a static path.
    assert.equal(error.code, grpc.status.UNIMPLEMENTED)
    assert.equal(error.details, '405 Method Not Allowed: This method is not allowed for the requested resource.')
  })
})

// A loopback port nothing listens on.
async function closedPort () {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// One call on a bare HTTP/2 session, with the flags of its response's
// HEADERS frame.
function rawCall (session, authority, path, body) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, ':authority': authority, 'content-type': 'application/grpc', te: 'trailers' })
    let head = null
    let endsStream = false
    const chunks = []
    stream.on('response', (headers, flags) => {
      head = headers
      endsStream = (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0
    })
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('end', () => resolve({ headers: head, endsStream, body: Buffer.concat(chunks).toString() }))
    stream.on('error', reject)
    stream.setTimeout(10000, () => stream.close(http2.constants.NGHTTP2_CANCEL))
    stream.end(body)
  })
}

// A gRPC frame of a JSON message.
function frame (message) {
  const bytes = Buffer.from(JSON.stringify(message))
  const head = Buffer.alloc(5)
  head.writeUInt32BE(bytes.length, 1)
  return Buffer.concat([head, bytes])
}

describe('gRPC errors svr answers itself', () => {
  const scope = createScope()
  let svr
  let certFile
  before(async () => {
    const upstream = await startGrpcServer(scope, HANDLERS)
    const live = 'h2c://127.0.0.1:' + upstream.port
    const site = await makeSite(scope)
    const cert = await makeCertificate(site.dir, 'svr', ['localhost', '127.0.0.1'])
    certFile = cert.cert
    const route = (host, extra) => ({ path: '/', host, retries: 0, ...extra })
    await site.writeConfig(http2SiteConfig(cert, {
      proxy: [
        route('down.test', { upstreams: ['h2c://127.0.0.1:' + await closedPort()], maxFails: 1, failTimeout: 600000 }),
        route('slow.test', { upstreams: [live], firstByteTimeout: 300 }),
        route('small.test', { upstreams: [live], maxBodySize: 10 })
      ]
    }))
    svr = await startSvr(scope, site.configFile)
  })
  after(() => scope.cleanup())

  it('should answer UNAVAILABLE when no upstream could take the call, as a trailers-only response', async (t) => {
    const session = await connectH2(svr.port)
    t.after(() => session.close())
    // Refused: 502, every time (a route's lone upstream is never taken out).
    for (const [status, text] of [[502, 'Bad Gateway: The server received an invalid response from an upstream server.'],
      [502, 'Bad Gateway: The server received an invalid response from an upstream server.']]) {
      const { headers, endsStream, body } = await rawCall(session, 'down.test', '/svr.test.Echo/Unary', frame({ tag: 'raw' }))
      assert.deepEqual([headers[':status'], headers['content-type'], headers['grpc-status'], endsStream, body],
        [200, 'application/grpc', '14', true, ''], 'for ' + status)
      assert.equal(headers['grpc-message'], status + ' ' + text + ' Request ID: ' + headers['x-request-id'])
    }
    // As the gRPC client sees it.
    const client = echoClient(t, svr.port, certFile, { authority: 'down.test' })
    const { error } = await unary(client, { tag: 'down' })
    assert.equal(error.code, grpc.status.UNAVAILABLE)
    assert.match(error.details, /^502 Bad Gateway: The server received an invalid response from an upstream server\. Request ID: [0-9a-f-]{36}$/)
  })

  it('should answer DEADLINE_EXCEEDED when the upstream is too slow to answer', async (t) => {
    const client = echoClient(t, svr.port, certFile, { authority: 'slow.test' })
    const { error } = await unary(client, { tag: 'too-slow', sleep: 3000 })
    assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED)
    assert.match(error.details, /^504 Gateway Timeout: An upstream server did not answer in time\. Request ID: /)
    assert.equal(await noted('too-slow', 'cancelled'), true)
  })

  it('should answer RESOURCE_EXHAUSTED to a call over the route\'s body limit', async (t) => {
    const client = echoClient(t, svr.port, certFile, { authority: 'small.test' })
    const { error } = await unary(client, { tag: 'big', padding: 'x'.repeat(100) })
    assert.equal(error.code, grpc.status.RESOURCE_EXHAUSTED)
    assert.equal(error.details, '413 Payload Too Large: The request body is larger than the server accepts.')
  })
})

describe('gRPC through the proxy, to an https:// upstream', () => {
  it('should speak HTTP/2 to it when the route has http2, and only then', async (t) => {
    const site = await makeSite(t)
    const upstreamCert = await makeCertificate(site.dir, 'upstream', ['127.0.0.1'])
    const upstream = await startGrpcServer(t, HANDLERS, upstreamCert)
    const cert = await makeCertificate(site.dir, 'svr', ['localhost', '127.0.0.1'])
    const route = (host, http2) => ({ path: '/', host, http2, retries: 0, upstreams: ['https://127.0.0.1:' + upstream.port], tls: { ca: upstreamCert.cert } })
    await site.writeConfig(http2SiteConfig(cert, { proxy: [route('h2.test', true), route('h1.test', false)] }))
    const svr = await startSvr(t, site.configFile)
    const h2 = echoClient(t, svr.port, cert.cert, { authority: 'h2.test' })
    assert.deepEqual(await unary(h2, { tag: 'tls' }), { value: { echo: { tag: 'tls' }, client: [] }, error: null })
    const list = await streamed(h2.List({ count: 2 }))
    assert.deepEqual([list.code, list.metadata, list.messages], [grpc.status.OK, { 'x-count': '2' }, [{ i: 0 }, { i: 1 }]])
    // Without http2, ALPN offers HTTP/1.1 alone, which a gRPC server refuses.
    const h1 = echoClient(t, svr.port, cert.cert, { authority: 'h1.test' })
    const { error } = await unary(h1, { tag: 'tls-h1' })
    assert.equal(error.code, grpc.status.UNAVAILABLE)
    assert.match(error.details, /^502 Bad Gateway: /)
  })
})
