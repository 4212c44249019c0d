'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { tlsSessionServices } = require('../../lib/tls/session-cache')

describe('the cluster TLS session cache', () => {
  it('should give back a stored session by its id, and null for others', () => {
    const services = tlsSessionServices({})
    services['tls-session-store']({ session: 'ab01', data: 'c2Vzc2lvbg==' })
    assert.equal(services['tls-session-fetch']({ session: 'ab01', id: 7 }), 'c2Vzc2lvbg==')
    assert.equal(services['tls-session-fetch']({ session: 'ab02', id: 8 }), null)
  })

  it('should ignore malformed messages instead of throwing', () => {
    const services = tlsSessionServices({})
    for (const msg of [{}, { session: 5, data: 'x' }, { session: 'not hex', data: 'x' }, { session: 'ab', data: 7 },
      { session: 'ab', data: 'x'.repeat(20000) }, { session: 'a'.repeat(66), data: 'x' }]) {
      assert.equal(services['tls-session-store'](msg), null)
    }
    assert.equal(services['tls-session-fetch']({ session: 'ab' }), null)
    assert.equal(services['tls-session-fetch']({ session: 'a'.repeat(66) }), null)
    assert.equal(services['tls-session-fetch']({}), null)
  })
})
