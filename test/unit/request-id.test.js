'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { AccessLog, attachContext, requestIdOf } = require('../../lib/logging/access-log')

function exchange (incoming) {
  const req = {
    socket: { remoteAddress: '::ffff:127.0.0.1' },
    method: 'GET',
    url: '/',
    httpVersion: '1.1',
    headers: incoming === undefined ? {} : { 'x-request-id': incoming }
  }
  const sent = {}
  const res = {
    headersSent: false,
    setHeader (name, value) { sent[name.toLowerCase()] = value },
    on () {}
  }
  new AccessLog('1').observe(req, res)
  return { req, res, sent }
}

describe('request id of a request', () => {
  it('should be generated and sent before the pipeline runs', () => {
    const { req, sent } = exchange()
    assert.match(sent['x-request-id'], /^[0-9a-f-]{36}$/)
    assert.equal(requestIdOf(req), sent['x-request-id'])
    assert.equal(attachContext(req, {}), sent['x-request-id'])
  })

  it('should ignore the id a client sends directly', () => {
    const { req, sent } = exchange('chosen-by-client')
    assert.notEqual(attachContext(req, { fromTrustedProxy: false }), 'chosen-by-client')
    assert.notEqual(sent['x-request-id'], 'chosen-by-client')
  })

  it('should adopt a trusted proxy\'s id when it is safe, and replace the header', () => {
    const { req, sent } = exchange('proxy-42.a')
    assert.equal(attachContext(req, { fromTrustedProxy: true }), 'proxy-42.a')
    assert.equal(sent['x-request-id'], 'proxy-42.a')
    assert.equal(requestIdOf(req), 'proxy-42.a')
  })

  it('should not adopt an unsafe id even from a trusted proxy', () => {
    const { req, sent } = exchange('x"\r\ninjected: 1')
    const id = attachContext(req, { fromTrustedProxy: true })
    assert.match(id, /^[0-9a-f-]{36}$/)
    assert.equal(sent['x-request-id'], id)
  })

  it('should give a context created outside the server an id of its own', () => {
    const req = { headers: {} }
    assert.match(attachContext(req, {}), /^[0-9a-f-]{36}$/)
    assert.equal(requestIdOf(req), null)
  })
})
