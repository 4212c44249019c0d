'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { parseListenSpec, describeSpec, formatAddress, listenError } = require('../../lib/listen')

describe('parseListenSpec(value)', () => {
  it('should take numbers and digit strings as ports on all interfaces', () => {
    assert.deepEqual(parseListenSpec(8080), { port: 8080 })
    assert.deepEqual(parseListenSpec('8080'), { port: 8080 })
  })

  it('should split "ip:port" and "[v6]:port"', () => {
    assert.deepEqual(parseListenSpec('127.0.0.1:81'), { host: '127.0.0.1', port: 81 })
    assert.deepEqual(parseListenSpec('[::1]:0'), { host: '::1', port: 0 })
    assert.deepEqual(parseListenSpec('[::]:80'), { host: '::', port: 80 })
  })

  it('should bind a mapped IPv4 address as plain IPv4', () => {
    assert.deepEqual(parseListenSpec('[::ffff:127.0.0.1]:80'), { host: '127.0.0.1', port: 80 })
  })

  it('should take anything else as a unix socket path', () => {
    assert.deepEqual(parseListenSpec('/run/svr/http.sock'), { path: '/run/svr/http.sock' })
    assert.deepEqual(parseListenSpec('localhost:80'), { path: 'localhost:80' })
    assert.deepEqual(parseListenSpec('[nonsense]:80'), { path: '[nonsense]:80' })
  })
})

describe('describeSpec and formatAddress', () => {
  it('should bracket IPv6 hosts', () => {
    assert.equal(describeSpec({ host: '::1', port: 80 }), '[::1]:80')
    assert.equal(formatAddress({ address: '::1', port: 8080, family: 'IPv6' }, 'http'), 'http://[::1]:8080')
    assert.equal(formatAddress({ address: '127.0.0.1', port: 1, family: 'IPv4' }, 'https'), 'https://127.0.0.1:1')
  })

  it('should name sockets as unix:path', () => {
    assert.equal(describeSpec({ path: '/s' }), 'unix:/s')
    assert.equal(formatAddress('/s', 'http'), 'unix:/s')
  })
})

describe('listenError(err)', () => {
  it('should name the address and a fix for the common errors', () => {
    const inUse = Object.assign(new Error('x'), { code: 'EADDRINUSE', listenSpec: { host: '127.0.0.1', port: 80 } })
    const err = listenError(inUse)
    assert.equal(err.code, 'SVR_ERR_LISTEN')
    assert.match(err.message, /^cannot listen on 127\.0\.0\.1:80: address already in use/)
    assert.equal(err.cause, inUse)
    const denied = Object.assign(new Error('x'), { code: 'EACCES', listenSpec: { port: 80 } })
    assert.match(listenError(denied).message, /port 80: permission denied.*CAP_NET_BIND_SERVICE/)
    const missing = Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL', listenSpec: { host: '10.9.9.9', port: 80 } })
    assert.match(listenError(missing).message, /10\.9\.9\.9:80: address not available/)
  })
})
