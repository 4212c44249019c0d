'use strict'

// The proxy's promises that no other test held: which requests go to a
// second upstream, which forwarding fields a client may not choose, which
// fields of an upstream's answer stop at svr, and what counts against an
// upstream's health (a client that leaves is not its fault).

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { once, EventEmitter } = require('node:events')
const http = require('node:http')
const net = require('node:net')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { rawRequest, parseResponse } = require('../helpers/raw-http')
const { startUpstream } = require('../helpers/upstream')

const MIB = 1024 * 1024

async function proxied (t, routes, config = {}) {
  const site = await makeSite(t, { workers: 1, ...config, proxy: routes })
  return startSvr(t, site.configFile)
}

/**
 * One request with a chosen local address (a second loopback address is a
 * second client), on a connection of its own unless an agent is given.
 * @returns {Promise<{status: number, headers: object, body: string, reused: boolean}>}
 */
function send (port, target, { method = 'GET', headers, body, localAddress, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method, headers, localAddress, agent }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString(), reused: req.reusedSocket }))
      res.on('error', reject)
    })
    req.setTimeout(10000, () => req.destroy(new Error('no answer to ' + target)))
    req.on('error', reject)
    req.end(body)
  })
}

// A request written byte for byte, on a connection svr closes after it.
function raw (port, method, target, lines = [], body = '') {
  return rawRequest(port, [method + ' ' + target + ' HTTP/1.1', 'Host: site.example', 'Connection: close', ...lines, '', body].join('\r\n'))
}

// rawRequest from another local address; the answer once svr closes.
function rawFrom (port, localAddress, data) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress })
    const chunks = []
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer to ' + JSON.stringify(data))))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('latin1'))))
    socket.write(data)
  })
}

// An upstream that notes what it got (method, target, fields, body
// length) and answers with its name.
async function recordingUpstream (t, name) {
  const upstream = await startUpstream(t, {
    name,
    handler (req, res) {
      let length = 0
      req.on('data', (chunk) => { length += chunk.length })
      req.on('end', () => {
        upstream.seen.push({ method: req.method, url: req.url, headers: req.headers, length })
        res.writeHead(200, { 'Content-Type': 'text/plain' })
        res.end(name)
      })
    }
  })
  upstream.seen = []
  return upstream
}

// The origin of a port nothing listens on: connections are refused.
async function refusedOrigin (t) {
  const upstream = await startUpstream(t)
  await upstream.stop()
  return upstream.origin
}

/**
 * A TCP server for upstreams that are no HTTP server: `onRequest(socket,
 * line)` gets each connection's first request line; `lines` keeps them.
 */
async function tcpUpstream (t, onRequest) {
  const sockets = new Set()
  const lines = []
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.once('data', (chunk) => {
      const line = chunk.toString('latin1').split('\r\n')[0]
      lines.push(line)
      onRequest(socket, line)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise((resolve) => server.close(resolve))
  })
  return { origin: 'http://127.0.0.1:' + server.address().port, lines }
}

// Reads a request, then resets the connection: no answer byte.
const resettingUpstream = (t) => tcpUpstream(t, (socket) => socket.resetAndDestroy())
// Answers what is not HTTP.
const garbageUpstream = (t) => tcpUpstream(t, (socket) => socket.end('SSH-2.0-OpenSSH_9.2\r\n'))
// Takes the request and never answers.
const silentUpstream = (t) => tcpUpstream(t, () => {})

describe('proxy retries: what may be sent to a second upstream', () => {
  it('should retry any request that reached no upstream, and one that did only when idempotent without a body', async (t) => {
    const refused = await refusedOrigin(t)
    const reset = await resettingUpstream(t)
    const garbage = await garbageUpstream(t)
    const silent = await silentUpstream(t)
    const alive = await recordingUpstream(t, 'alive')
    // [route, first upstream, method, further header lines, body, status the client gets, whether alive gets it, the body length it gets]
    const cases = [
      ['get', refused, 'GET', [], '', 200, true],
      ['head', refused, 'HEAD', [], '', 200, true],
      ['options', refused, 'OPTIONS', [], '', 200, true],
      ['trace', refused, 'TRACE', [], '', 200, true],
      ['put-empty', refused, 'PUT', ['Content-Length: 0'], '', 200, true],
      ['delete', refused, 'DELETE', [], '', 200, true],
      // Refused: not a byte was sent, so any method goes on, its body whole
      // (read from the client only once a connection took it).
      ['post', refused, 'POST', [], '', 200, true],
      ['post-empty', refused, 'POST', ['Content-Length: 0'], '', 200, true],
      ['patch', refused, 'PATCH', [], '', 200, true],
      ['put-body', refused, 'PUT', ['Content-Length: 5'], 'hello', 200, true, 5],
      ['post-body', refused, 'POST', ['Content-Length: 5'], 'hello', 200, true, 5],
      ['get-chunked', refused, 'GET', ['Transfer-Encoding: chunked'], '5\r\nhello\r\n0\r\n\r\n', 200, true, 5],
      ['delete-chunked-empty', refused, 'DELETE', ['Transfer-Encoding: chunked'], '0\r\n\r\n', 200, true],
      // Reset before a byte of the answer: the upstream got the request but
      // cannot have answered it; only the idempotent one goes on.
      ['get-reset', reset.origin, 'GET', [], '', 200, true],
      ['put-empty-reset', reset.origin, 'PUT', ['Content-Length: 0'], '', 200, true],
      ['post-reset', reset.origin, 'POST', ['Content-Length: 0'], '', 502, false],
      ['delete-reset', reset.origin, 'DELETE', ['Content-Length: 2'], 'ab', 502, false],
      // An answer that is not HTTP, and one that never comes: the upstream
      // may be working on the request, so even a GET is not sent again.
      ['get-garbage', garbage.origin, 'GET', [], '', 502, false],
      ['get-silent', silent.origin, 'GET', [], '', 504, false]
    ]
    // Each route's first request goes to its first upstream (round robin
    // starts there); passive health is off, as the routes share upstreams.
    const svr = await proxied(t, cases.map(([name, first]) => ({
      path: '/' + name, upstreams: [first, alive.origin], maxFails: 0, firstByteTimeout: first === silent.origin ? 500 : 60000
    })))
    const statuses = []
    for (const [name, , method, lines, body] of cases) statuses.push([name, (await raw(svr.port, method, '/' + name, lines, body)).status])
    assert.deepEqual(statuses, cases.map(([name, , , , , status]) => [name, status]))
    assert.deepEqual(alive.seen.map((seen) => [seen.method, seen.url, seen.length]),
      cases.filter((c) => c[6]).map(([name, , method, , , , , length = 0]) => [method, '/' + name, length]))
    assert.deepEqual(reset.lines, ['GET /get-reset HTTP/1.1', 'PUT /put-empty-reset HTTP/1.1', 'POST /post-reset HTTP/1.1', 'DELETE /delete-reset HTTP/1.1'])
    assert.deepEqual(garbage.lines, ['GET /get-garbage HTTP/1.1'])
    assert.deepEqual(silent.lines, ['GET /get-silent HTTP/1.1'])
  })

  it('should try at most retries more upstreams', async (t) => {
    const refused = await refusedOrigin(t)
    const alive = await recordingUpstream(t, 'alive')
    const resets = [await resettingUpstream(t), await resettingUpstream(t), await resettingUpstream(t)]
    const svr = await proxied(t, [
      { path: '/none', upstreams: [refused, alive.origin], retries: 0, maxFails: 0 },
      { path: '/one', upstreams: resets.map((r) => r.origin), retries: 1, maxFails: 0 },
      { path: '/two', upstreams: resets.map((r) => r.origin), retries: 2, maxFails: 0 }
    ])
    assert.equal((await raw(svr.port, 'GET', '/none')).status, 502)
    assert.deepEqual(alive.seen, [])
    assert.equal((await raw(svr.port, 'GET', '/one')).status, 502)
    assert.equal(resets.map((r) => r.lines.length).reduce((a, b) => a + b), 2)
    assert.equal((await raw(svr.port, 'GET', '/two')).status, 502)
    // Each upstream once per request: never the same one twice.
    assert.deepEqual(resets.map((r) => r.lines.filter((line) => line === 'GET /two HTTP/1.1').length), [1, 1, 1])
  })
})

describe('proxy forwarding fields: what a client may not choose', () => {
  // The forwarding fields the upstream saw, with the rest it must see.
  function expectedFields (headers, requestId) {
    return { host: headers.host, via: '1.1 svr', 'x-request-id': requestId, connection: 'keep-alive', ...headers }
  }

  it('should replace each forwarding field an untrusted client sends, and keep those of a trusted proxy', async (t) => {
    const upstream = await recordingUpstream(t, 'app')
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }], { enableIPSpoofing: true, trustedProxies: ['127.0.0.1'] })
    const host = '127.0.0.1:' + upstream.port
    // From 127.0.0.2, not a trusted proxy: each field on its own.
    const own = {
      host,
      'x-forwarded-for': '127.0.0.2',
      'x-real-ip': '127.0.0.2',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'site.example',
      forwarded: 'for=127.0.0.2;proto=http;host=site.example'
    }
    const spoofs = [
      { 'x-forwarded-for': '203.0.113.7' },
      { 'x-forwarded-proto': 'https' },
      { 'x-forwarded-host': 'evil.example' },
      { 'x-real-ip': '203.0.113.7' },
      { forwarded: 'for=203.0.113.7;proto=https;host=evil.example' },
      { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '127.0.0.1', 'X-Forwarded-Host': 'evil.example', Forwarded: 'for=127.0.0.1' }
    ]
    for (const spoof of spoofs) {
      const res = await send(svr.port, '/u', { localAddress: '127.0.0.2', headers: { host: 'site.example', ...spoof } })
      assert.equal(res.status, 200)
      assert.deepEqual(upstream.seen.pop().headers, expectedFields(own, res.headers['x-request-id']), JSON.stringify(spoof))
    }
    // Without a Host there is no X-Forwarded-Host to make: the client's is still not passed on.
    const bare = await rawFrom(svr.port, '127.0.0.2', 'GET /u HTTP/1.0\r\nX-Forwarded-Host: evil.example\r\n\r\n')
    assert.equal(bare.status, 200)
    assert.deepEqual(upstream.seen.pop().headers, {
      host, 'x-forwarded-for': '127.0.0.2', 'x-real-ip': '127.0.0.2', 'x-forwarded-proto': 'http', forwarded: 'for=127.0.0.2;proto=http', via: '1.0 svr', 'x-request-id': bare.headers['x-request-id'], connection: 'keep-alive'
    })
    // From 127.0.0.1, a trusted proxy: its client, protocol and host are kept
    // (Forwarded says the same); Forwarded and X-Real-IP are svr's own.
    const trusted = await send(svr.port, '/u', {
      headers: { host: 'site.example', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example', forwarded: 'for=198.51.100.1', 'x-real-ip': '198.51.100.1' }
    })
    assert.deepEqual(upstream.seen.pop().headers, expectedFields({
      host,
      'x-forwarded-for': '203.0.113.7, 127.0.0.1',
      'x-real-ip': '203.0.113.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'public.example',
      forwarded: 'for=203.0.113.7, for=127.0.0.1;proto=https;host=public.example'
    }, trusted.headers['x-request-id']))
    const plain = await send(svr.port, '/u', { headers: { host: 'site.example' } })
    assert.deepEqual(upstream.seen.pop().headers, expectedFields({ ...own, 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1;proto=http;host=site.example' }, plain.headers['x-request-id']))
  })

  it('should believe no forwarding field without enableIPSpoofing, even from an address in trustedProxies', async (t) => {
    const upstream = await recordingUpstream(t, 'app')
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }], { enableIPSpoofing: false, trustedProxies: ['127.0.0.1'] })
    const res = await send(svr.port, '/u', {
      headers: { host: 'site.example', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', forwarded: 'for=203.0.113.7' }
    })
    assert.deepEqual(upstream.seen.pop().headers, expectedFields({
      host: '127.0.0.1:' + upstream.port,
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'site.example',
      forwarded: 'for=127.0.0.1;proto=http;host=site.example'
    }, res.headers['x-request-id']))
  })
})

describe('proxy answers: hop-by-hop fields stop at svr', () => {
  // Fields of a connection, which svr makes itself for the client's.
  function hopByHopAnswer (req, res) {
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      'Proxy-Authenticate': 'Basic realm="upstream"',
      Trailer: 'X-Checksum',
      Upgrade: 'h2c',
      'Keep-Alive': 'timeout=99, max=7',
      // Keep-Alive not among the names, so that it must go as hop-by-hop by itself.
      Connection: 'X-Named-A, X-Named-B',
      'X-Named-A': 'a',
      'X-Named-B': 'b',
      'X-App': 'kept'
    })
    res.write('chunk one ')
    res.addTrailers({ 'X-Checksum': 'abc' })
    res.end('chunk two')
  }

  it('should drop Proxy-Authenticate, Trailer, Upgrade, Keep-Alive, Connection and the fields it names', async (t) => {
    const upstream = await startUpstream(t, { handler: hopByHopAnswer })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }])
    const res = await send(svr.port, '/x')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'chunk one chunk two')
    const { date, 'x-request-id': id, ...rest } = res.headers
    assert.match(date, / GMT$/)
    assert.match(id, /^[0-9a-f-]{36}$/)
    assert.deepEqual(rest, {
      'content-type': 'text/plain',
      'x-app': 'kept',
      via: '1.1 svr',
      server: 'svr',
      connection: 'close',
      'transfer-encoding': 'chunked'
    })
  })

  it('should frame the answer for its own client: no Transfer-Encoding to an HTTP/1.0 client', async (t) => {
    const upstream = await startUpstream(t, { handler: hopByHopAnswer })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }])
    const res = await rawRequest(svr.port, 'GET /x HTTP/1.0\r\nHost: site.example\r\n\r\n')
    assert.equal(res.status, 200)
    assert.equal(res.headers['transfer-encoding'], undefined)
    // The body as the upstream meant it, ended by the close, not in chunks.
    assert.equal(res.body, 'chunk one chunk two')
  })

  it('should keep the client\'s connection open when the upstream closes its own', async (t) => {
    const upstream = await startUpstream(t, {
      handler (req, res) {
        res.writeHead(200, { Connection: 'close', 'Content-Length': '2' })
        res.end('ok')
      }
    })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }])
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    t.after(() => agent.destroy())
    const first = await send(svr.port, '/1', { agent })
    const second = await send(svr.port, '/2', { agent })
    assert.deepEqual([first.status, first.body, first.headers.connection], [200, 'ok', 'keep-alive'])
    assert.deepEqual([second.status, second.reused], [200, true])
    assert.equal(upstream.hits, 2)
  })
})

// How long the upstream waits for more of a body before it gives up and
// closes the connection, as application servers do (nginx's
// client_body_timeout): far longer than svr needs to notice a hang-up.
const BODY_PATIENCE_MS = 3000

/**
 * An upstream that reads request bodies: `arrival` is emitted with each
 * request once its first body bytes are in, and `gone` when its
 * connection closed. A body that stalls is given up on.
 */
async function bodyTakingUpstream (t) {
  const events = new EventEmitter()
  const upstream = await startUpstream(t, {
    name: 'app',
    handler (req, res) {
      let timer = null
      const patience = () => {
        clearTimeout(timer)
        timer = setTimeout(() => req.socket.destroy(), BODY_PATIENCE_MS)
      }
      patience()
      req.on('error', () => {})
      req.socket.once('close', () => {
        clearTimeout(timer)
        events.emit('gone')
      })
      req.once('data', () => events.emit('arrival'))
      req.on('data', patience)
      req.on('end', () => {
        clearTimeout(timer)
        res.end('ok')
      })
    }
  })
  return { upstream, events }
}

/**
 * Send a request head and part of its body, wait until the upstream has
 * some of it, hang up (`how`: 'close' sends FIN, 'reset' RST), and wait
 * until the upstream's connection is gone.
 */
async function hangUpMidBody (port, events, how, head, part) {
  const arrived = once(events, 'arrival')
  const gone = once(events, 'gone')
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  const answered = once(socket, 'data').then(([data]) => String(data).split('\r\n')[0])
  socket.write(head)
  socket.write(part)
  // An upstream taken out leaves svr answering at once, and nothing arrives.
  assert.equal(await Promise.race([arrived.then(() => 'arrived'), answered]), 'arrived')
  if (how === 'reset') socket.resetAndDestroy()
  else socket.destroy()
  await gone
}

async function upstreamRow (port, origin) {
  const status = await send(port, '/svrjsstatus.svr')
  const row = new RegExp('<tr class="upstream"><td>' + origin + '</td><td>([^<]*)</td><td>\\d+</td><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td></tr>').exec(status.body)
  return row === null ? null : { state: row[1], errors: Number(row[2]), inFlight: Number(row[3]), queued: Number(row[4]) }
}

describe('proxy health: what counts against an upstream', () => {
  // Taken out at the second failure, for longer than the test.
  const STRICT = { maxFails: 2, failWindow: 600000, failTimeout: 300000 }

  it('should not blame the upstream for a client that hangs up in the middle of its request body', async (t) => {
    const { upstream, events } = await bodyTakingUpstream(t)
    const svr = await proxied(t, [
      { path: '/up', upstreams: [upstream.origin], ...STRICT },
      { path: '/limited', upstreams: [upstream.origin], ...STRICT, maxBodySize: 4 * MIB }
    ], { allowStatus: true, metricsPath: '/metrics' })
    const half = Buffer.alloc(MIB / 2, 'x')
    for (const how of ['close', 'reset']) {
      for (let i = 0; i <= STRICT.maxFails; i++) {
        await hangUpMidBody(svr.port, events, how, 'POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: ' + MIB + '\r\n\r\n', half)
        // A chunked body on a route with a body limit goes through svr's counter of its bytes.
        await hangUpMidBody(svr.port, events, how, 'POST /limited HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' + MIB.toString(16) + '\r\n', half)
      }
    }
    for (let i = 0; i < 3; i++) assert.deepEqual([(await send(svr.port, '/up/after', { method: 'POST', body: 'abc' })).status, i], [200, i])
    assert.deepEqual(await upstreamRow(svr.port, upstream.origin), { state: 'up', errors: 0, inFlight: 0, queued: 0 })
    const metrics = (await send(svr.port, '/metrics')).body
    assert.doesNotMatch(metrics, /\nsvr_proxy_upstream_errors_total\{/)
    assert.match(metrics, new RegExp('\nsvr_proxy_upstream_healthy\\{upstream="' + upstream.origin + '",worker="1"\\} 1\n'))
    assert.doesNotMatch(svr.output, /is out for|failed: |broke off/)
  })

  it('should not blame the upstream for a client that hangs up while the answer streams', async (t) => {
    const events = new EventEmitter()
    const upstream = await startUpstream(t, {
      handler (req, res) {
        if (req.url !== '/big') {
          res.end('ok')
          return
        }
        res.once('close', () => events.emit('gone'))
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
        // More than the sockets on the way hold, so the answer is still streaming when the client leaves.
        const chunk = Buffer.alloc(64 * 1024, 'y')
        let left = 256
        const more = () => {
          while (left > 0 && !res.destroyed) {
            left--
            if (!res.write(chunk)) return res.once('drain', more)
          }
          res.end()
        }
        more()
      }
    })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin], ...STRICT }])
    for (let i = 0; i <= STRICT.maxFails; i++) {
      const gone = once(events, 'gone')
      const socket = net.connect(svr.port, '127.0.0.1')
      socket.on('error', () => {})
      socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
      const [data] = await once(socket, 'data')
      assert.equal(String(data).split('\r\n')[0], 'HTTP/1.1 200 OK')
      socket.destroy()
      await gone
    }
    assert.equal((await send(svr.port, '/small')).status, 200)
    assert.doesNotMatch(svr.output, /is out for|broke off/)
  })

  it('should count the upstream\'s own failures: a success clears them, maxFails within failWindow take it out', async (t) => {
    let broken = false
    const upstream = await startUpstream(t, {
      handler (req, res) {
        if (broken) req.socket.destroy()
        else res.end('app')
      }
    })
    // A backup, so that the upstream is not the route's last one up (which
    // is never taken out), and no retries, so that each failure shows.
    const spare = await recordingUpstream(t, 'spare')
    const svr = await proxied(t, [
      { path: '/app', upstreams: [upstream.origin, { url: spare.origin, backup: true }], retries: 0, ...STRICT },
      { path: '/lone', upstreams: [upstream.origin], retries: 0, ...STRICT }
    ], { allowStatus: true, metricsPath: '/metrics' })
    const outcomes = []
    for (const fails of [true, false, true, false, true, true, false]) {
      broken = fails
      const res = await send(svr.port, '/app/x')
      outcomes.push(res.status + ' ' + res.body.slice(0, 5))
    }
    // fail, ok, fail, ok: each success forgave the failure before it; then two in a row, and the backup takes over.
    assert.deepEqual(outcomes.map((outcome) => outcome.startsWith('502') ? '502' : outcome),
      ['502', '200 app', '502', '200 app', '502', '502', '200 spare'])
    await svr.waitFor(/proxy upstream http:\/\/127\.0\.0\.1:\d+ is out for 300000 ms after 2 failures within 600000 ms/)
    assert.equal(upstream.hits, 6)
    assert.deepEqual(await upstreamRow(svr.port, upstream.origin), { state: 'out in 1 of 1 workers', errors: 4, inFlight: 0, queued: 0 })
    const metrics = (await send(svr.port, '/metrics')).body
    const series = (name) => new RegExp('\n' + name + '\\{upstream="' + upstream.origin + '",worker="1"\\} (\\d+)\n').exec(metrics)?.[1]
    assert.deepEqual([series('svr_proxy_upstream_requests_total'), series('svr_proxy_upstream_errors_total'), series('svr_proxy_upstream_healthy')], ['6', '4', '0'])
  })

  it('should never take a route\'s lone upstream out: the request after the app is back gets its answer', async (t) => {
    let broken = true
    const upstream = await startUpstream(t, {
      handler (req, res) {
        if (broken) req.socket.destroy()
        else res.end('app')
      }
    })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin], ...STRICT }])
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await send(svr.port, '/' + i)).status)
    broken = false
    statuses.push((await send(svr.port, '/5')).status)
    assert.deepEqual(statuses, [502, 502, 502, 502, 502, 200])
    assert.equal(upstream.hits, 6)
    assert.doesNotMatch(svr.output, /is out for/)
  })

  it('should forget failures older than failWindow, and take an upstream back after failTimeout', async (t) => {
    let broken = true
    const upstream = await startUpstream(t, {
      handler (req, res) {
        if (broken) req.socket.destroy()
        else res.end('app')
      }
    })
    const spare = await recordingUpstream(t, 'spare')
    const rule = { maxFails: 2, failWindow: 1000, failTimeout: 2000 }
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin, { url: spare.origin, backup: true }], retries: 0, ...rule }])
    assert.equal((await send(svr.port, '/1')).status, 502)
    // Past the window, the first failure no longer adds up with the next.
    await sleep(rule.failWindow + 200)
    assert.equal((await send(svr.port, '/2')).status, 502)
    assert.equal((await send(svr.port, '/3')).status, 502)
    const out = Date.now()
    assert.equal((await send(svr.port, '/4')).body, 'spare')
    assert.equal(upstream.hits, 3)
    broken = false
    // Still out past failWindow: the exclusion lasts failTimeout.
    await sleep(rule.failWindow + 400 - (Date.now() - out))
    assert.equal((await send(svr.port, '/5')).body, 'spare')
    await sleep(rule.failTimeout + 300 - (Date.now() - out))
    assert.equal((await send(svr.port, '/6')).body, 'app')
  })

  it('should take an upstream out when one of two routes\' checks fails, and judge by fall and rise', async (t) => {
    // Check times of each path as the upstream received them.
    const checks = { '/health-a': [], '/health-b': [], '/health': [] }
    let failing = true
    const upstream = await startUpstream(t, {
      handler (req, res) {
        if (checks[req.url] === undefined) {
          res.end('ok')
          return
        }
        checks[req.url].push(Date.now())
        res.statusCode = req.url === '/health-a' || (req.url === '/health' && failing) ? 500 : 200
        res.end()
      }
    })
    const judged = await startUpstream(t, { handler: upstream.handler })
    const check = { interval: 100, timeout: 1000, fall: 1, rise: 1 }
    const spare = await recordingUpstream(t, 'spare')
    const backup = { url: spare.origin, backup: true }
    const svr = await proxied(t, [
      { path: '/a', upstreams: [upstream.origin, backup], healthCheck: { ...check, path: '/health-a' } },
      { path: '/b', upstreams: [upstream.origin, backup], healthCheck: { ...check, path: '/health-b' } },
      { path: '/c', upstreams: [judged.origin], healthCheck: { ...check, path: '/health', fall: 3, rise: 2 } }
    ])
    await svr.waitFor(new RegExp('proxy upstream ' + upstream.origin + ' is unhealthy after 1 failed checks of /health-a: status 500'))
    // The verdict is the upstream's, whichever route's check failed: /b's passing check does not keep it in.
    let body = 'ok'
    for (let i = 0; i < 100 && body !== 'spare'; i++) {
      body = (await send(svr.port, '/b/x')).body
      if (body !== 'spare') await sleep(50)
    }
    assert.deepEqual([body, (await send(svr.port, '/a/x')).body], ['spare', 'spare'])
    // Out after the third failed check in a row, not before: the line is written once that check's answer is in.
    const out = await svr.waitFor(new RegExp('(\\S+) warn \\[primary\\] proxy upstream ' + judged.origin + ' is unhealthy after 3 failed checks of /health: status 500'))
    assert.ok(Date.parse(out[1]) >= checks['/health'][2], out[1] + ' before the third check at ' + new Date(checks['/health'][2]).toISOString())
    // Out, but the route's only one: requests still try it, and it answers them.
    assert.equal((await send(svr.port, '/c/x')).body, 'ok')
    const failed = checks['/health'].length
    failing = false
    const back = await svr.waitFor(new RegExp('(\\S+) info \\[primary\\] proxy upstream ' + judged.origin + ' is healthy again \\(2 checks of /health passed\\)'))
    assert.ok(Date.parse(back[1]) >= checks['/health'][failed + 1], back[1] + ' before the second passing check')
  })
})
