'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { wildcardPattern } = require('../../lib/hosts/server-names')
const { withoutHopByHop } = require('../../lib/http2/compat')
const { http2Settings } = require('../../lib/tls/options')
const { httpLimitOptions } = require('../../lib/worker/limits')
const { listeningLines } = require('../../lib/listen')

describe('SNI wildcard patterns', () => {
  it('should let a whole-label "*" stand for exactly one label', () => {
    const pattern = wildcardPattern('*.example.com')
    assert.equal(pattern.test('www.example.com'), true)
    assert.equal(pattern.test('example.com'), false)
    assert.equal(pattern.test('.example.com'), false)
    assert.equal(pattern.test('a.b.example.com'), false)
    assert.equal(pattern.test('www.example.com.evil'), false)
  })

  it('should let "*" inside a label stand for the rest of that label only', () => {
    const pattern = wildcardPattern('img*.example.com')
    assert.equal(pattern.test('img.example.com'), true)
    assert.equal(pattern.test('img42.example.com'), true)
    assert.equal(pattern.test('img4.2.example.com'), false)
    assert.equal(pattern.test('cdn.example.com'), false)
  })

  it('should treat regex characters in names literally', () => {
    assert.equal(wildcardPattern('*.a+b.test').test('x.aab.test'), false)
    assert.equal(wildcardPattern('*.a+b.test').test('x.a+b.test'), true)
  })
})

describe('HTTP/2 hop-by-hop header filter', () => {
  it('should drop connection-specific headers in any case and keep the rest', () => {
    const headers = { 'Content-Type': 'text/plain', Connection: 'close', 'KEEP-ALIVE': 'timeout=5', 'transfer-encoding': 'chunked', Upgrade: 'h2c' }
    assert.deepEqual(withoutHopByHop(headers), { 'Content-Type': 'text/plain' })
    // The caller's object is left alone.
    assert.equal(headers.Connection, 'close')
  })

  it('should return the same object when there is nothing to drop', () => {
    const headers = { 'Content-Type': 'text/plain' }
    assert.equal(withoutHopByHop(headers), headers)
    assert.equal(withoutHopByHop(undefined), undefined)
  })

  it('should filter the array forms of writeHead', () => {
    assert.deepEqual(withoutHopByHop(['Connection', 'close', 'X-A', '1']), ['X-A', '1'])
    assert.deepEqual(withoutHopByHop([['connection', 'close'], ['x-a', '1']]), [['x-a', '1']])
  })
})

describe('HTTP/2 settings', () => {
  const base = { maxHeaderSize: 16384, http2Settings: {}, proxy: [] }

  it('should bound header lists by maxHeaderSize when unset', () => {
    assert.deepEqual(http2Settings(base), { maxHeaderListSize: 16384 })
  })

  it('should let configured settings win, the SVR.JS alias included', () => {
    const settings = http2Settings({ ...base, http2Settings: { maxConcurrentStreams: 7, maxHeaderSize: 999 } })
    assert.deepEqual(settings, { maxConcurrentStreams: 7, maxHeaderListSize: 999 })
  })
})

describe('HTTP limit options', () => {
  const config = { headersTimeout: 20000, requestTimeout: 120000, keepAliveTimeout: 5000, maxHeaderSize: 16384 }

  it('should pass the limits through and check deadlines every second', () => {
    assert.deepEqual(httpLimitOptions(config), {
      headersTimeout: 20000,
      requestTimeout: 120000,
      keepAliveTimeout: 5000,
      maxHeaderSize: 16384,
      connectionsCheckingInterval: 1000
    })
  })

  it('should cap the header deadline at a shorter whole-request one', () => {
    assert.equal(httpLimitOptions({ ...config, requestTimeout: 5000 }).headersTimeout, 5000)
    assert.equal(httpLimitOptions({ ...config, requestTimeout: 0 }).headersTimeout, 20000)
  })
})

describe('listening lines', () => {
  const address = { address: '127.0.0.1', port: 8443 }
  const plain = { address: '127.0.0.1', port: 8080 }

  it('should name the main server first and the plain one with its role', () => {
    assert.deepEqual(listeningLines({ main: address, plain }, { secure: true, disableToHTTPSRedirect: false }), [
      'listening on https://127.0.0.1:8443',
      'listening on http://127.0.0.1:8080 (plain HTTP, redirects to HTTPS)'
    ])
    assert.deepEqual(listeningLines({ main: address, plain }, { secure: true, disableToHTTPSRedirect: true })[1],
      'listening on http://127.0.0.1:8080 (plain HTTP)')
    assert.deepEqual(listeningLines({ main: plain, plain: null }, { secure: false }), ['listening on http://127.0.0.1:8080'])
  })
})
