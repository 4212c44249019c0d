'use strict'

const { describe, it, mock } = require('node:test')
const assert = require('node:assert/strict')
const { createStatusStage, formatDuration, STATUS_PATH } = require('../../lib/pipeline/stages/status')
const { inProcessRuntime } = require('../helpers/in-process-runtime')

function stage (config = {}) {
  const shared = { serverString: 'svr', mods: [], respond: { sendError: mock.fn() }, runtime: inProcessRuntime({ warn () {} }).runtime }
  const handler = createStatusStage({ config: { allowStatus: true, statusAllow: [], ...config } }, shared)
  return { handler, shared }
}

function fakeExchange (clientAddress, method = 'GET') {
  const res = {
    headers: {},
    body: null,
    headersSent: false,
    destroyed: false,
    setHeader (name, value) { this.headers[name.toLowerCase()] = value },
    end (body) { this.body = body }
  }
  return { req: { method, headers: { host: 'example.test' } }, res, ctx: { pathname: STATUS_PATH, clientAddress } }
}

describe('status stage', () => {
  it('should be left out when allowStatus is off', () => {
    assert.equal(stage({ allowStatus: false }).handler, null)
  })

  it('should pass a remote client on, as if the page did not exist', () => {
    const { handler, shared } = stage()
    for (const address of ['192.0.2.2', 'fd00::2', '::ffff:192.0.2.2']) {
      const { req, res, ctx } = fakeExchange(address)
      assert.equal(handler(req, res, ctx), false, address)
      assert.equal(res.body, null)
    }
    assert.equal(shared.respond.sendError.mock.callCount(), 0)
  })

  it('should serve a client listed in statusAllow', async () => {
    const { handler } = stage({ statusAllow: ['192.0.2.0/24'] })
    const { req, res, ctx } = fakeExchange('192.0.2.2')
    assert.equal(await handler(req, res, ctx), true)
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<dd id="requests">\d+<\/dd>/)
    assert.match(res.body, /svr status for example\.test/)
  })

  it('should pass other paths on', () => {
    const { handler } = stage()
    const { req, res, ctx } = fakeExchange('127.0.0.1')
    ctx.pathname = '/svrjsstatus.svr/'
    assert.equal(handler(req, res, ctx), false)
  })
})

describe('formatDuration', () => {
  it('should print the largest units needed', () => {
    assert.equal(formatDuration(0), '0s')
    assert.equal(formatDuration(59999), '59s')
    assert.equal(formatDuration(61000), '1m 1s')
    assert.equal(formatDuration(3600000), '1h 0m 0s')
    assert.equal(formatDuration(90061000), '1d 1h 1m 1s')
  })
})
