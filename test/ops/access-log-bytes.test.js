'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { parseResponse } = require('../helpers/raw-http')
const { parseCombined, waitForLines } = require('../helpers/access-log')
const { createScope } = require('../helpers/scope')

const SMALL = 'ten bytes\n'
const LARGER = 'x'.repeat(3000)
// Larger than what the loopback's socket buffers hold, so a client that
// stops reading leaves most of it unsent.
const HUGE_BYTES = 48 * 1024 * 1024
const SCRIPT = `if (href === '/whole') {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
  res.end(Buffer.alloc(${HUGE_BYTES}, 120))
  return
}
if (href === '/chunked') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write('hello')
  res.end(' world')
  return
}
elseCallback()
`
// What Node sends for the script's body: two chunks and the last chunk.
const CHUNKED_WIRE = '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'

/**
 * One connection that sends each request when `ready(received)` says so and
 * collects everything until the server closes it.
 * @returns {Promise<string>} the raw bytes received, as latin1
 */
function converse (port, steps) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let received = ''
    let next = 0
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('no complete answer; got ' + JSON.stringify(received.slice(0, 300))))
    }, 10000)
    function sendReady () {
      while (next < steps.length && steps[next].ready(received)) socket.write(steps[next++].wire)
    }
    socket.on('connect', sendReady)
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      sendReady()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(received)
    })
  })
}

// Split a run of responses with Content-Length or chunked bodies.
function splitResponses (raw) {
  const responses = []
  let at = 0
  while (at < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', at) + 4
    const { headers } = parseResponse(raw.slice(at, headEnd))
    let end = headEnd + Number(headers['content-length'] || 0)
    if (headers['transfer-encoding'] === 'chunked') end = raw.indexOf('0\r\n\r\n', headEnd) + 5
    responses.push({ headers, body: raw.slice(headEnd, end) })
    at = end
  }
  return responses
}

function get (target, last) {
  return 'GET ' + target + ' HTTP/1.1\r\nHost: localhost\r\n' + (last ? 'Connection: close\r\n' : '') + '\r\n'
}

describe('access log body bytes over HTTP/1.1', () => {
  const scope = createScope()
  let site
  let svr
  let seen = 0
  const logFile = () => path.join(site.dir, 'logs', 'access.log')

  // The log lines of the next `count` requests, by request id.
  async function nextLines (count) {
    const lines = await waitForLines(logFile(), seen + count)
    seen += count
    return new Map(lines.slice(seen - count).map((line) => {
      const fields = parseCombined(line)
      return [fields.requestId, fields]
    }))
  }

  before(async () => {
    site = await makeSite(scope, { workers: 1, logDirectory: 'logs' }, { 'small.txt': SMALL, 'larger.txt': LARGER })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    await fs.writeFile(path.join(site.webroot, 'huge.bin'), crypto.randomBytes(HUGE_BYTES))
    svr = await startSvr(scope, site.configFile)
  })
  after(() => scope.cleanup())

  it('should count each response of a kept-alive connection on its own', async () => {
    const raw = await converse(svr.port, [
      { wire: get('/larger.txt'), ready: () => true },
      { wire: get('/small.txt', true), ready: (received) => received.endsWith(LARGER) }
    ])
    const [larger, small] = splitResponses(raw)
    assert.equal(larger.body, LARGER)
    assert.equal(small.body, SMALL)
    const lines = await nextLines(2)
    assert.equal(lines.get(larger.headers['x-request-id']).bytes, 3000)
    assert.equal(lines.get(small.headers['x-request-id']).bytes, 10)
  })

  it('should count pipelined responses, chunked among them, each on its own', async () => {
    const raw = await converse(svr.port, [
      { wire: get('/small.txt') + get('/chunked') + get('/larger.txt', true), ready: () => true }
    ])
    const [small, chunked, larger] = splitResponses(raw)
    assert.equal(chunked.body, CHUNKED_WIRE)
    assert.equal(larger.body, LARGER)
    const lines = await nextLines(3)
    assert.equal(lines.get(small.headers['x-request-id']).bytes, 10)
    // Chunk framing counts, as in nginx's $body_bytes_sent.
    assert.equal(lines.get(chunked.headers['x-request-id']).bytes, CHUNKED_WIRE.length)
    assert.equal(lines.get(larger.headers['x-request-id']).bytes, 3000)
  })

  it('should log no body bytes for a HEAD and a 304', async () => {
    const first = splitResponses(await converse(svr.port, [{ wire: get('/larger.txt', true), ready: () => true }]))[0]
    const etag = first.headers.etag
    assert.match(etag, /^"/)
    const raw = await converse(svr.port, [{
      wire: 'HEAD /larger.txt HTTP/1.1\r\nHost: localhost\r\n\r\n' +
        'GET /larger.txt HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: ' + etag + '\r\nConnection: close\r\n\r\n',
      ready: () => true
    }])
    const heads = raw.split('\r\n\r\n')
    assert.match(heads[0], /^HTTP\/1\.1 200 OK\r\n/)
    assert.match(heads[0], /\r\nContent-Length: 3000\r\n/)
    assert.match(heads[1], /^HTTP\/1\.1 304 Not Modified\r\n/)
    assert.equal(heads[2], '', 'neither answer has a body')
    const lines = [...(await nextLines(3)).values()]
    assert.deepEqual(lines.map((l) => [l.request, l.status, l.bytes]), [
      ['GET /larger.txt HTTP/1.1', 200, 3000],
      ['HEAD /larger.txt HTTP/1.1', 200, 0],
      ['GET /larger.txt HTTP/1.1', 304, 0]
    ])
  })

  it('should count at most what was handed to the connection when the client gives up a download', async () => {
    const { requestId, received } = await giveUp('/huge.bin')
    const line = (await nextLines(1)).get(requestId)
    assert.equal(line.status, 200)
    assert.equal(line.aborted, true)
    assert.ok(line.bytes >= received, line.bytes + ' bytes logged, ' + received + ' received')
    assert.ok(line.bytes < HUGE_BYTES / 2, line.bytes + ' bytes logged of ' + HUGE_BYTES)
  })

  // One end() hands the whole body to the connection at once; Node before
  // 24 then emits 'finish' even when writing it fails because the client
  // hung up, and the response looked complete.
  it('should log a body handed over in one end() as aborted when the client hangs up before it is sent', async () => {
    const { requestId, received } = await giveUp('/whole')
    const line = (await nextLines(1)).get(requestId)
    assert.equal(line.status, 200)
    assert.equal(line.aborted, true)
    assert.ok(received < HUGE_BYTES / 2, received + ' bytes received')
  })

  // Read the head and 256 KiB of `target`, stop reading, and hang up.
  function giveUp (target) {
    let received = 0
    let requestId = null
    return new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port: svr.port }, () => socket.write(get(target, true)))
      let head = ''
      socket.on('data', (chunk) => {
        if (requestId === null) {
          head += chunk.toString('latin1')
          const end = head.indexOf('\r\n\r\n')
          if (end === -1) return
          requestId = parseResponse(head.slice(0, end)).headers['x-request-id']
          received = head.length - end - 4
          return
        }
        received += chunk.length
        if (received < 256 * 1024) return
        // Stop reading, let the server fill the buffers, then hang up.
        socket.pause()
        setTimeout(() => socket.destroy(), 300)
      })
      socket.on('error', () => {})
      socket.on('close', () => resolve({ requestId, received }))
    })
  }
})
