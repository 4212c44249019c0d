'use strict'

// StreamResponse#setHeader (lib/http2/stream-response.js), in one process
// with its client: it checks names and values as Node's setHeader does,
// though it remembers the last value of each name that passed the check.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http2 = require('node:http2')
const os = require('node:os')
const path = require('node:path')
const { StreamResponse } = require('../../lib/http2/stream-response')
const { makeCertificate, h2Request } = require('../helpers/tls')

// What each request's handler does to its response: a list of
// [name, value] set in turn; each throw is recorded by its code.
const PLANS = {
  '/valid-then-invalid': [['X-Probe', 'fine'], ['X-Probe', 'bad\r\nInjected: 1'], ['X-Probe', 'fine']],
  '/invalid-twice': [['X-Probe', 'bad\nvalue'], ['X-Probe', 'bad\nvalue']],
  '/undefined': [['X-Probe', 'fine'], ['X-Probe', undefined]],
  '/bad-name': [['Bad Name', 'x'], ['Bad Name', 'x']],
  '/hop-by-hop': [['Connection', 'close'], ['X-Probe', 'kept']]
}

describe('HTTP/2 header fields set on StreamResponse', () => {
  let dir, server, session
  const thrown = new Map()

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-h2headers-'))
    const cert = await makeCertificate(dir, 'main')
    server = http2.createSecureServer({ cert: await fs.readFile(cert.cert), key: await fs.readFile(cert.key) })
    server.on('stream', (stream, headers) => {
      const res = new StreamResponse(stream, headers[':method'])
      const codes = []
      for (const [name, value] of PLANS[headers[':path']]) {
        try {
          res.setHeader(name, value)
        } catch (err) {
          codes.push(err.code)
        }
      }
      thrown.set(headers[':path'], codes)
      res.end('ok')
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    session = http2.connect('https://127.0.0.1:' + server.address().port, { rejectUnauthorized: false })
    session.on('error', () => {})
  })

  after(async () => {
    session.close()
    await new Promise((resolve) => server.close(resolve))
    await fs.rm(dir, { recursive: true, force: true })
  })

  async function request (target) {
    const answer = await h2Request(session, { ':path': target }, { endStream: true })
    return { status: answer.status, probe: answer.headers['x-probe'], codes: thrown.get(target) }
  }

  it('should refuse a value with a line break after a valid one, and keep the valid one', async () => {
    assert.deepEqual(await request('/valid-then-invalid'), { status: 200, probe: 'fine', codes: ['ERR_INVALID_CHAR'] })
  })

  it('should refuse an invalid value every time it is set', async () => {
    assert.deepEqual(await request('/invalid-twice'), { status: 200, probe: undefined, codes: ['ERR_INVALID_CHAR', 'ERR_INVALID_CHAR'] })
  })

  it('should refuse undefined as Node does', async () => {
    assert.deepEqual(await request('/undefined'), { status: 200, probe: 'fine', codes: ['ERR_HTTP_INVALID_HEADER_VALUE'] })
  })

  it('should refuse an invalid name every time it is set', async () => {
    assert.deepEqual(await request('/bad-name'), { status: 200, probe: undefined, codes: ['ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_HTTP_TOKEN'] })
  })

  it('should drop a connection-specific field, which HTTP/2 forbids', async () => {
    const answer = await h2Request(session, { ':path': '/hop-by-hop' }, { endStream: true })
    assert.deepEqual([answer.headers.connection, answer.headers['x-probe'], thrown.get('/hop-by-hop')], [undefined, 'kept', []])
  })
})
