'use strict'

// A client that resets an HTTP/2 stream (RST_STREAM CANCEL: a tab closed,
// a download given up) while svr answers on the bare stream
// (lib/http2/stream-response.js) must leave an access-log line marked
// aborted, as an HTTP/1.1 response cut short does; otherwise the log and the
// metrics count every given-up download as delivered. The body bytes of
// answers on the bare stream are held here too, ranges from disk included.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const http2 = require('node:http2')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { makeCertificate, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')
const { parseCombined, readLines, waitUntil } = require('../helpers/access-log')

// Far more than the 64 KiB a stream's flow-control window lets svr send
// before the client has read anything: at the head, most of it is unsent.
const HUGE_BYTES = 8 * 1024 * 1024
// Under fileCacheMaxFileSize: held in memory, sent with stream.end(body).
const SMALL = 'small file\n'.repeat(10)
const CANCELLED_DOWNLOADS = 300
const CANCELLING_SESSIONS = 10
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/**
 * A secure svr with HTTP/2 and its access log in logs/access.log, in the
 * given format, with no script and no mods: every static answer leaves on the
 * bare stream. `huge.bin` is random, so nothing compresses it on the way.
 */
async function startSecure (scope, logFormat, script = null) {
  const huge = crypto.randomBytes(HUGE_BYTES)
  const site = await makeSite(scope, {}, { 'huge.bin': huge, 'small.txt': SMALL })
  const cert = await makeCertificate(site.dir, 'main')
  if (script !== null) await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script)
  await site.writeConfig(http2SiteConfig(cert, { logDirectory: 'logs', logFormat }))
  const svr = await startSvr(scope, site.configFile)
  const client = await connectH2(svr.port)
  scope.after(() => client.close())
  return { svr, client, huge, log: path.join(site.dir, 'logs', 'access.log') }
}

/**
 * Ask for a file and reset the stream as soon as its head arrives.
 * @returns {Promise<{id: string, status: number, received: number, rstCode: number}>}
 */
function cancelAtHead (client, target) {
  return new Promise((resolve, reject) => {
    const stream = client.request({ ':path': target }, { endStream: true })
    let head = null
    let received = 0
    stream.on('response', (headers) => {
      head = headers
      stream.close(http2.constants.NGHTTP2_CANCEL)
    })
    stream.on('data', (chunk) => { received += chunk.length })
    stream.on('error', reject)
    stream.on('close', () => {
      if (head === null) reject(new Error('the stream closed before its head'))
      else resolve({ id: head['x-request-id'], status: head[':status'], received, rstCode: stream.rstCode })
    })
  })
}

/**
 * The access-log line of one request, once it is written.
 * @param {{log: string, svr: object}} server from startSecure: the log file, and svr's output for the failure message
 * @param {string} id the request's X-Request-Id
 * @param {(line: string) => object} parse
 */
async function lineOf (server, id, parse) {
  try {
    return await waitUntil(async () => (await readLines(server.log)).map(parse).find((entry) => entry !== null && entry.requestId === id),
      'no access-log line for ' + id)
  } catch (err) {
    err.message += '\nlog: ' + (await readLines(server.log)).join('\n') + '\nsvr: ' + server.svr.output
    throw err
  }
}

describe('HTTP/2 streams reset by the client, in the combined access log', () => {
  const scope = createScope()
  let server
  before(async () => { server = await startSecure(scope, 'combined') })
  after(() => scope.cleanup())

  it('should log a download the client reset as aborted, and the next stream of the session as complete', async () => {
    const cancelled = await cancelAtHead(server.client, '/huge.bin')
    assert.equal(cancelled.status, 200)
    assert.equal(cancelled.rstCode, http2.constants.NGHTTP2_CANCEL)
    assert.match(cancelled.id, UUID)
    // The precondition of the test: the reset came while the file was still on its way.
    assert.ok(cancelled.received < HUGE_BYTES, cancelled.received + ' of ' + HUGE_BYTES + ' bytes arrived before the reset')
    const aborted = await lineOf(server, cancelled.id, parseCombined)
    assert.equal(aborted.request, 'GET /huge.bin HTTP/2.0')
    assert.equal(aborted.status, 200)
    assert.equal(aborted.aborted, true)
    assert.equal(aborted.address, '127.0.0.1')

    // The reset ends one stream, not the session, and not the next answer's line.
    const whole = await h2Request(server.client, { ':path': '/huge.bin' }, { endStream: true })
    assert.equal(whole.status, 200)
    assert.equal(Buffer.compare(whole.body, server.huge), 0)
    const complete = await lineOf(server, whole.headers['x-request-id'], parseCombined)
    assert.equal(complete.request, 'GET /huge.bin HTTP/2.0')
    assert.equal(complete.status, 200)
    assert.equal(complete.bytes, HUGE_BYTES)
    assert.equal(complete.aborted, false)
  })

  // Node's respondWithFile crashed the worker (SIGSEGV) on Node.js 22 and
  // 24 when downloads were cancelled like this, a few in a few hundred. The
  // cancels are spread over sessions, each one a stream at a time: Node
  // answers a burst of resets on one session with ENHANCE_YOUR_CALM.
  it('should survive hundreds of downloads cancelled at the head, with a line each', async (t) => {
    const sessions = await Promise.all(Array.from({ length: CANCELLING_SESSIONS }, () => connectH2(server.svr.port)))
    t.after(() => { for (const session of sessions) session.close() })
    const ids = []
    await Promise.all(sessions.map(async (session) => {
      for (let i = 0; i < CANCELLED_DOWNLOADS / CANCELLING_SESSIONS; i++) ids.push((await cancelAtHead(session, '/huge.bin')).id)
    }))
    assert.equal(ids.length, CANCELLED_DOWNLOADS)
    assert.doesNotMatch(server.svr.output, /exited unexpectedly/)
    const last = await lineOf(server, ids[ids.length - 1], parseCombined)
    assert.equal(last.aborted, true)
    const aborted = new Set((await readLines(server.log)).map(parseCombined).filter((entry) => entry !== null && entry.aborted).map((entry) => entry.requestId))
    assert.deepEqual(ids.filter((id) => !aborted.has(id)), [])
  })

  it('should log the body bytes of a range sent from disk and of a file held in memory, on the bare stream', async () => {
    const cases = [
      [{ ':path': '/huge.bin', range: 'bytes=1000-1999' }, 206, 1000],
      [{ ':path': '/huge.bin', range: 'bytes=-10' }, 206, 10],
      [{ ':path': '/small.txt' }, 200, SMALL.length],
      [{ ':path': '/small.txt', ':method': 'HEAD' }, 200, 0]
    ]
    for (const [headers, status, bytes] of cases) {
      const res = await h2Request(server.client, headers, { endStream: true })
      assert.equal(res.status, status)
      assert.equal(res.body.length, bytes)
      if (headers.range === 'bytes=1000-1999') assert.equal(Buffer.compare(res.body, server.huge.subarray(1000, 2000)), 0)
      const entry = await lineOf(server, res.headers['x-request-id'], parseCombined)
      assert.deepEqual([entry.request, entry.status, entry.bytes, entry.aborted],
        [(headers[':method'] || 'GET') + ' ' + headers[':path'] + ' HTTP/2.0', status, bytes, false])
    }
  })
})

describe('HTTP/2 streams reset by the client, in the JSON access log', () => {
  const scope = createScope()
  let server
  before(async () => { server = await startSecure(scope, 'json') })
  after(() => scope.cleanup())

  it('should log a download the client reset with "completed": false', async () => {
    const cancelled = await cancelAtHead(server.client, '/huge.bin')
    assert.equal(cancelled.status, 200)
    assert.ok(cancelled.received < HUGE_BYTES, cancelled.received + ' of ' + HUGE_BYTES + ' bytes arrived before the reset')
    const entry = await lineOf(server, cancelled.id, parseJson)
    assert.deepEqual([entry.method, entry.target, entry.protocol, entry.status, entry.completed],
      ['GET', '/huge.bin', 'HTTP/2.0', 200, false])
    const whole = await h2Request(server.client, { ':path': '/small.txt' }, { endStream: true })
    const complete = await lineOf(server, whole.headers['x-request-id'], parseJson)
    assert.deepEqual([complete.status, complete.bytes, complete.completed], [200, SMALL.length, true])
  })
})

// Application code gets Node's objects (lib/http2/promote.js); it may write
// a body to a HEAD request, which Node then drops.
const SCRIPT = `
disableEndElseCallbackExecute = true
if (href === '/written') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end('written by the script\\n')
} else {
  elseCallback()
}
`

describe('HTTP/2 streams answered through Node\'s objects, in the access log', () => {
  const scope = createScope()
  let server
  before(async () => { server = await startSecure(scope, 'combined', SCRIPT) })
  after(() => scope.cleanup())

  it('should log a reset download as aborted, and no body bytes for a HEAD the script wrote a body to', async () => {
    const cancelled = await cancelAtHead(server.client, '/huge.bin')
    assert.equal(cancelled.status, 200)
    assert.ok(cancelled.received < HUGE_BYTES, cancelled.received + ' of ' + HUGE_BYTES + ' bytes arrived before the reset')
    const aborted = await lineOf(server, cancelled.id, parseCombined)
    assert.deepEqual([aborted.request, aborted.status, aborted.aborted], ['GET /huge.bin HTTP/2.0', 200, true])
    for (const [method, bytes] of [['GET', 22], ['HEAD', 0]]) {
      const res = await h2Request(server.client, { ':method': method, ':path': '/written' }, { endStream: true })
      assert.equal(res.status, 200)
      assert.equal(res.body.length, bytes)
      const entry = await lineOf(server, res.headers['x-request-id'], parseCombined)
      assert.deepEqual([entry.request, entry.status, entry.bytes, entry.aborted], [method + ' /written HTTP/2.0', 200, bytes, false])
    }
  })
})

function parseJson (line) {
  try {
    return JSON.parse(line)
  } catch {
    return null
  }
}
