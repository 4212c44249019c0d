'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { createThrottleHandlers, createThrottleClient } = require('../../lib/auth/cluster-throttle')
const { message, dispatch } = require('../../lib/ipc')

function fakeWorker () {
  return { sent: [], isConnected: () => true, send (msg) { this.sent.push(msg) } }
}

describe('cluster throttle', () => {
  it('should answer checks and attempts with the lock in seconds', () => {
    const warnings = []
    const handlers = createThrottleHandlers({ warn: (line) => warnings.push(line) }, { userLimit: 1 })
    const worker = fakeWorker()
    dispatch(handlers, message('auth-attempt', { id: 1, address: '192.0.2.1', user: 'alice' }), worker)
    dispatch(handlers, message('auth-attempt', { id: 2, address: '192.0.2.1', user: 'alice' }), worker)
    dispatch(handlers, message('auth-check', { id: 3, address: '192.0.2.1', user: 'alice' }), worker)
    dispatch(handlers, message('auth-check', { id: 4, address: '192.0.2.1', user: null }), worker)
    assert.deepEqual(worker.sent.map((msg) => [msg.act, msg.id, msg.retryAfter]),
      [['auth-verdict', 1, 0], ['auth-verdict', 2, 300], ['auth-verdict', 3, 300], ['auth-verdict', 4, 0]])
    assert.equal(warnings.length, 1)
    assert.match(warnings[0], /"alice" from 192\.0\.2\.1 locked for 300 s/)
  })

  it('should reset on success', () => {
    const handlers = createThrottleHandlers({ warn () {} }, { userLimit: 1 })
    const worker = fakeWorker()
    dispatch(handlers, message('auth-attempt', { id: 1, address: '192.0.2.1', user: 'alice' }), worker)
    dispatch(handlers, message('auth-success', { address: '192.0.2.1', user: 'alice', counted: true }), worker)
    dispatch(handlers, message('auth-attempt', { id: 2, address: '192.0.2.1', user: 'alice' }), worker)
    assert.equal(worker.sent[1].retryAfter, 0)
  })

  it('should ignore malformed queries', () => {
    const handlers = createThrottleHandlers({ warn () {} })
    const worker = fakeWorker()
    for (const fields of [{}, { id: 'x', address: '1.2.3.4', user: 'a' }, { id: 1, address: 5, user: 'a' }, { id: 1, address: '1.2.3.4', user: {} }]) {
      assert.doesNotThrow(() => dispatch(handlers, message('auth-attempt', fields), worker))
      assert.doesNotThrow(() => dispatch(handlers, message('auth-success', fields), worker))
    }
    dispatch(handlers, message('auth-attempt', { id: 1, address: '1.2.3.4', user: null }), worker)
    assert.equal(worker.sent.length, 0)
  })

  it('should keep the counters in-process outside a cluster, across clients', async () => {
    const log = { warn () {} }
    const first = createThrottleClient(log)
    for (let i = 0; i < 5; i++) assert.equal(await first.attempt('192.0.2.99', 'zed'), 0)
    assert.equal(await first.attempt('192.0.2.99', 'zed'), 300)
    // A reload builds a new pipeline and a new client: the lock stays.
    const second = createThrottleClient(log)
    assert.equal(await second.check('192.0.2.99', 'zed'), 300)
    assert.equal(await second.check('192.0.2.98', 'zed'), 0)
  })
})
