'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { rawRequest } = require('../helpers/raw-http')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

/**
 * A response is complete when its body is exactly Content-Length bytes long.
 * @param {{headers: object, body: string}} res
 */
function assertComplete (res) {
  assert.ok(res.headers['content-length'] !== undefined, 'has Content-Length')
  assert.equal(Buffer.byteLength(res.body, 'latin1'), Number(res.headers['content-length']), 'body is complete')
}

/** An answer Node's parser refused, written by lib/worker/client-error.js on the raw socket. */
function assertRefused (res, status) {
  assert.equal(res.status, status, res.raw.slice(0, 200))
  assert.equal(res.headers.connection, 'close')
  assert.equal(res.headers.server, 'svr')
  assert.match(res.body, new RegExp('<title>' + status + ' '))
  assertComplete(res)
}

describe('malformed and unusual requests', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, { workers: 1, customHeaders: { 'X-Test': '1 {path}' } })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  describe('when Node\'s parser refuses the request', () => {
    it('should answer a garbled request line with 400 and close', async () => {
      assertRefused(await rawRequest(port, 'GARBAGE\r\n\r\n'), 400)
      assertRefused(await rawRequest(port, 'GET / FTP/1.1\r\nHost: x\r\n\r\n'), 400)
    })

    it('should answer a header line without a colon with 400 and close', async () => {
      assertRefused(await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'), 400)
    })

    it('should answer an oversized header with 431 and close', async () => {
      const res = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Big: ' + 'a'.repeat(20000) + '\r\n\r\n')
      assertRefused(res, 431)
    })

    it('should answer raw non-ASCII bytes in the target with 400 and close', async () => {
      assertRefused(await rawRequest(port, Buffer.from('GET /café.txt HTTP/1.1\r\nHost: x\r\n\r\n')), 400)
    })

    it('should answer an unknown method with 405 and an Allow header', async () => {
      const res = await rawRequest(port, 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n')
      assertRefused(res, 405)
      assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
    })

    it('should answer a 20,000-character target with 414, not 431', async () => {
      assertRefused(await rawRequest(port, 'GET /' + 'a'.repeat(20000) + ' HTTP/1.1\r\nHost: x\r\n\r\n'), 414)
    })

    it('should answer the good requests pipelined before a refused one first', async () => {
      const good = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
      const res = await rawRequest(port, good + good + 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n')
      const statuses = [...res.raw.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => Number(match[1]))
      assert.deepEqual(statuses, [200, 200, 405])
      assert.equal(res.raw.split('<h1>test index</h1>\n').length, 3, 'both index bodies arrived')
      assert.match(res.raw, /405 Method Not Allowed\r\n[^]*Connection: close\r\n\r\n<!DOCTYPE html>[^]*<\/html>\n$/)

      const garbage = await rawRequest(port, good + 'GARBAGE\r\n\r\n')
      assert.match(garbage.raw, /^HTTP\/1\.1 200 OK\r\n[^]*<h1>test index<\/h1>\nHTTP\/1\.1 400 Bad Request\r\n/)
    })
  })

  describe('when the request target cannot be served', () => {
    it('should answer a target longer than 8192 characters with a 414 page', async () => {
      const res = await request(port, '/' + 'a'.repeat(9000))
      assert.equal(res.status, 414)
      assert.equal(res.headers['x-test'], '1 /' + 'a'.repeat(9000))
      assert.match(res.body, /<title>414 URI Too Long<\/title>/)
    })

    it('should answer HTTP/1.1 without Host with 400 but serve HTTP/1.0 without it', async () => {
      const missing = await rawRequest(port, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n')
      assert.equal(missing.status, 400)
      assertComplete(missing)
      const old = await rawRequest(port, 'GET / HTTP/1.0\r\n\r\n')
      assert.equal(old.status, 200)
      assert.equal(old.body, '<h1>test index</h1>\n')
    })

    it('should answer OPTIONS * with 204 and Allow, any other method with * with 400', async () => {
      const options = await rawRequest(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.equal(options.status, 204)
      assert.equal(options.headers.allow, 'GET, HEAD, OPTIONS')
      assert.equal(options.headers.server, 'svr')
      const get = await rawRequest(port, 'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.equal(get.status, 400)
      assertComplete(get)
    })

    it('should refuse absolute-form (proxy) requests with 501', async () => {
      const res = await rawRequest(port, 'GET http://127.0.0.1:' + port + '/index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.equal(res.status, 501)
      assert.doesNotMatch(res.body, /test index/)
      assertComplete(res)
    })

    it('should refuse CONNECT with 501 and close', async () => {
      const res = await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
      assert.equal(res.status, 501)
      assert.equal(res.headers.connection, 'close')
      assert.equal(res.headers.server, 'svr')
      assertComplete(res)
    })

    it('should answer an Expect other than 100-continue with 417', async () => {
      const res = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: close\r\n\r\n')
      assert.equal(res.status, 417)
      assert.match(res.body, /417 Expectation Failed/)
      assertComplete(res)
    })

    it('should still honour Expect: 100-continue', async () => {
      const res = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n')
      assert.match(res.raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/)
    })
  })
})
