'use strict'

// StreamResponse#sendFile (lib/http2/stream-response.js), in one process
// with its client: a file or part of it on the bare HTTP/2 stream, an open
// failure reported before any head, and downloads cancelled at the head.
// Node's respondWithFile, which it used before, crashed this very process
// with SIGSEGV on Node.js 22 and 24 within a few hundred such cancels.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const http2 = require('node:http2')
const os = require('node:os')
const path = require('node:path')
const { StreamResponse } = require('../../lib/http2/stream-response')
const { makeCertificate, h2Request } = require('../helpers/tls')

const FILE_BYTES = 8 * 1024 * 1024
const CANCELLED_DOWNLOADS = 300
// A new session now and then: Node answers a long run of resets on one
// session with ENHANCE_YOUR_CALM.
const CANCELS_PER_SESSION = 10

describe('HTTP/2 files sent by StreamResponse', () => {
  let dir, server, port, body
  const failures = []

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-h2file-'))
    body = crypto.randomBytes(FILE_BYTES)
    await fs.writeFile(path.join(dir, 'big.bin'), body)
    await fs.writeFile(path.join(dir, 'empty.bin'), '')
    const cert = await makeCertificate(dir, 'main')
    server = http2.createSecureServer({ cert: await fs.readFile(cert.cert), key: await fs.readFile(cert.key) })
    server.on('stream', (stream, headers) => serve(new StreamResponse(stream, headers[':method']), headers))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = server.address().port
  })

  after(async () => {
    await new Promise((resolve) => server.close(resolve))
    await fs.rm(dir, { recursive: true, force: true })
  })

  // /big.bin?start&length, /empty.bin, /missing.bin
  function serve (res, headers) {
    const [name, query] = headers[':path'].slice(1).split('?')
    const [start, length] = query === undefined ? [0, name === 'big.bin' ? FILE_BYTES : 0] : query.split('&').map(Number)
    res.setHeader('Content-Length', length)
    res.sendFile(path.join(dir, name), start, length, (err) => {
      failures.push(err.code)
      res.statusCode = 404
      res.setHeader('Content-Length', 0)
      res.end()
    })
  }

  function connect () {
    const session = http2.connect('https://127.0.0.1:' + port, { rejectUnauthorized: false })
    session.on('error', () => {})
    return session
  }

  it('should send a whole file, a part of it and an empty one', async (t) => {
    const session = connect()
    t.after(() => session.close())
    const whole = await h2Request(session, { ':path': '/big.bin' }, { endStream: true })
    assert.equal(whole.status, 200)
    assert.equal(Buffer.compare(whole.body, body), 0)
    const part = await h2Request(session, { ':path': '/big.bin?70000&100001' }, { endStream: true })
    assert.equal(Buffer.compare(part.body, body.subarray(70000, 170001)), 0)
    const empty = await h2Request(session, { ':path': '/empty.bin' }, { endStream: true })
    assert.deepEqual([empty.status, empty.body.length], [200, 0])
  })

  it('should leave the response to the caller when the file cannot be opened', async (t) => {
    const session = connect()
    t.after(() => session.close())
    const missing = await h2Request(session, { ':path': '/missing.bin' }, { endStream: true })
    assert.deepEqual([missing.status, failures], [404, ['ENOENT']])
  })

  it('should survive hundreds of downloads cancelled at the head', async () => {
    let cancelled = 0
    for (let i = 0; i < CANCELLED_DOWNLOADS; i += CANCELS_PER_SESSION) {
      const session = connect()
      for (let j = 0; j < CANCELS_PER_SESSION; j++) {
        await cancelAtHead(session)
        cancelled++
      }
      session.close()
    }
    assert.equal(cancelled, CANCELLED_DOWNLOADS)
  })
})

function cancelAtHead (session) {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': '/big.bin' }, { endStream: true })
    stream.on('response', () => stream.close(http2.constants.NGHTTP2_CANCEL))
    stream.on('data', () => {})
    stream.on('error', reject)
    stream.on('close', resolve)
  })
}
