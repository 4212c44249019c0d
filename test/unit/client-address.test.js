'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { compileForwarding, clientOf, hopAddress, warnForwardingConfig } = require('../../lib/access/client-address')
const { createContext } = require('../../lib/pipeline/request/context')

function fakeRequest (peer, xff) {
  const headers = { host: 'example.com' }
  if (xff !== undefined) headers['x-forwarded-for'] = xff
  return { url: '/', headers, socket: { remoteAddress: peer, remotePort: 40000, localAddress: '127.0.0.1' } }
}

function contextFor (config, req) {
  const full = { enableIPSpoofing: true, trustedProxies: ['127.0.0.1', '10.0.0.0/8'], ...config }
  const res = { setHeader () {} }
  return createContext(req, res, { config: full }, {})
}

describe('client address', () => {
  it('should take the first untrusted hop from the right, from a trusted peer', () => {
    const req = fakeRequest('127.0.0.1', '198.51.100.1, 203.0.113.5, 10.1.2.3')
    const ctx = contextFor({}, req)
    assert.equal(ctx.clientAddress, '203.0.113.5')
    assert.equal(ctx.fromTrustedProxy, true)
    assert.equal(req.socket.realRemoteAddress, '203.0.113.5')
    assert.equal(req.socket.realRemotePort, null)
    assert.equal(req.socket.originalRemoteAddress, '127.0.0.1')
    assert.equal(req.socket.originalRemotePort, 40000)
  })

  it('should ignore the header from an untrusted peer', () => {
    const req = fakeRequest('192.0.2.50', '203.0.113.5')
    const ctx = contextFor({}, req)
    assert.equal(ctx.clientAddress, '192.0.2.50')
    assert.equal(ctx.fromTrustedProxy, false)
    assert.equal(req.socket.realRemoteAddress, undefined)
  })

  it('should unwrap IPv4-mapped peers and clients, and write the socket form as SVR.JS did', () => {
    const req = fakeRequest('::ffff:127.0.0.1', '::ffff:203.0.113.5')
    assert.equal(contextFor({}, req).clientAddress, '203.0.113.5')
    const plain = fakeRequest('::ffff:127.0.0.1', '203.0.113.6')
    assert.equal(contextFor({}, plain).clientAddress, '203.0.113.6')
    assert.equal(plain.socket.realRemoteAddress, '::ffff:203.0.113.6')
  })

  it('should stay at the trusted hop when an entry is not an address', () => {
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', 'garbage, 10.0.0.7')).clientAddress, '10.0.0.7')
    // The walk ends there: an address written left of it is the client's own choice.
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', '198.51.100.66, garbage, 10.0.0.7')).clientAddress, '10.0.0.7')
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', '203.0.113.5 4711')).clientAddress, '127.0.0.1')
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', '')).clientAddress, '127.0.0.1')
    assert.deepEqual(clientOf(['127.0.0.1', 'unknown']), '127.0.0.1')
  })

  it('should read hops written with a port or in brackets', () => {
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', '203.0.113.5:4711')).clientAddress, '203.0.113.5')
    assert.equal(contextFor({}, fakeRequest('127.0.0.1', '[2001:db8::7]:4711, 10.0.0.9:80')).clientAddress, '2001:db8::7')
    assert.equal(hopAddress('[2001:db8::7]'), '2001:db8::7')
    assert.equal(hopAddress('2001:db8::7'), '2001:db8::7')
    assert.equal(hopAddress('198.51.100.1:'), null)
    assert.equal(hopAddress('host.example:80'), null)
    assert.equal(hopAddress('[garbage]:80'), null)
    assert.equal(hopAddress('unknown'), null)
  })

  it('should trust a Unix-socket peer only when trustedProxies has "localhost"', () => {
    const local = contextFor({ trustedProxies: ['localhost'] }, fakeRequest(undefined, '203.0.113.5'))
    assert.equal(local.clientAddress, '203.0.113.5')
    assert.equal(local.fromTrustedProxy, true)
    const bare = contextFor({ trustedProxies: ['localhost'] }, fakeRequest(undefined))
    assert.equal(bare.clientAddress, '')
    const other = contextFor({ trustedProxies: ['127.0.0.1'] }, fakeRequest(undefined, '203.0.113.5'))
    assert.equal(other.clientAddress, '')
    assert.equal(other.fromTrustedProxy, false)
  })

  it('should keep a trusted peer as the client without the header', () => {
    const ctx = contextFor({}, fakeRequest('10.9.9.9'))
    assert.equal(ctx.clientAddress, '10.9.9.9')
    assert.equal(ctx.fromTrustedProxy, true)
  })

  it('should do nothing without enableIPSpoofing or without trustedProxies', () => {
    assert.equal(compileForwarding({ enableIPSpoofing: false, trustedProxies: ['127.0.0.1'] }), null)
    assert.equal(compileForwarding({ enableIPSpoofing: true, trustedProxies: [] }), null)
    const off = contextFor({ enableIPSpoofing: false }, fakeRequest('127.0.0.1', '203.0.113.5'))
    assert.equal(off.clientAddress, '127.0.0.1')
    assert.equal(off.fromTrustedProxy, false)
    const empty = contextFor({ trustedProxies: [] }, fakeRequest('127.0.0.1', '203.0.113.5'))
    assert.equal(empty.clientAddress, '127.0.0.1')
  })

  it('should warn once about enableIPSpoofing without trustedProxies', () => {
    const lines = []
    const log = { warn: (line) => lines.push(line) }
    assert.equal(warnForwardingConfig({ enableIPSpoofing: true, trustedProxies: [] }, log), true)
    assert.equal(warnForwardingConfig({ enableIPSpoofing: true, trustedProxies: ['::1'] }, log), false)
    assert.equal(warnForwardingConfig({ enableIPSpoofing: false, trustedProxies: [] }, log), false)
    assert.equal(lines.length, 1)
    assert.match(lines[0], /enableIPSpoofing/)
  })
})
