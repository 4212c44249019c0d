'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { createContext } = require('../../lib/pipeline/request/context')
const { AccessLog } = require('../../lib/logging/access-log')

// A request arriving at the pipeline, from a peer that is a trusted proxy
// when `trusted`; what the response was sent is in `sent`.
function arrive (incoming, trusted = false) {
  const req = {
    socket: { remoteAddress: '127.0.0.1', localAddress: '127.0.0.1' },
    method: 'GET',
    url: '/',
    httpVersion: '1.1',
    headers: incoming === undefined ? { host: 'h.test' } : { host: 'h.test', 'x-request-id': incoming }
  }
  const sent = {}
  const res = {
    headersSent: false,
    setHeader (name, value) { sent[name.toLowerCase()] = value },
    on () {},
    once () {}
  }
  const config = { enableIPSpoofing: trusted, trustedProxies: ['127.0.0.1'] }
  const ctx = createContext(req, res, { config }, { accessLog: new AccessLog('1') })
  return { ctx, sent }
}

describe('request id of a request', () => {
  it('should be generated and sent as the request arrives', () => {
    const { ctx, sent } = arrive()
    assert.match(sent['x-request-id'], /^[0-9a-f-]{36}$/)
    assert.equal(ctx.requestId, sent['x-request-id'])
  })

  it('should ignore the id a client sends directly', () => {
    const { ctx, sent } = arrive('chosen-by-client')
    assert.match(ctx.requestId, /^[0-9a-f-]{36}$/)
    assert.equal(sent['x-request-id'], ctx.requestId)
  })

  it('should adopt a trusted proxy\'s id when it is safe, and send it back', () => {
    const { ctx, sent } = arrive('proxy-42.a', true)
    assert.equal(ctx.fromTrustedProxy, true)
    assert.equal(ctx.requestId, 'proxy-42.a')
    assert.equal(sent['x-request-id'], 'proxy-42.a')
  })

  it('should not adopt an unsafe id even from a trusted proxy', () => {
    const { ctx, sent } = arrive('x"\r\ninjected: 1', true)
    assert.match(ctx.requestId, /^[0-9a-f-]{36}$/)
    assert.equal(sent['x-request-id'], ctx.requestId)
  })
})
