'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { normalizeAddress, socketAddresses } = require('../../lib/hosts/vhost')

describe('normalizeAddress', () => {
  it('should unwrap IPv4-mapped IPv6 addresses and keep the rest', () => {
    assert.equal(normalizeAddress('::ffff:192.0.2.7'), '192.0.2.7')
    assert.equal(normalizeAddress('::ffff:abcd'), '::ffff:abcd')
    assert.equal(normalizeAddress('2001:db8::1'), '2001:db8::1')
    assert.equal(normalizeAddress(undefined), '')
  })
})

describe('socketAddresses', () => {
  it('should normalize both ends once per connection', () => {
    let reads = 0
    const socket = {
      get remoteAddress () { reads++; return '::ffff:192.0.2.7' },
      get localAddress () { reads++; return '::1' }
    }
    const first = socketAddresses(socket)
    assert.deepEqual(first, { remote: '192.0.2.7', local: '::1' })
    assert.equal(socketAddresses(socket), first)
    assert.equal(reads, 2, 'the socket is asked once')
  })
})
