'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { throttleServices, createThrottleClient } = require('../../lib/auth/cluster-throttle')
const { message, dispatch, serve, inProcessPair } = require('../../lib/ipc')

// The coordinator's end of a channel, recording what it sends back.
function fakePeer () {
  return { sent: [], notify (act, fields) { this.sent.push(message(act, fields)) } }
}

// serve() answers on a later turn; this waits for the answers to be sent.
const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('cluster throttle', () => {
  it('should answer checks and attempts with the lock in seconds', async () => {
    const warnings = []
    const handlers = serve(throttleServices({ log: { warn: (line) => warnings.push(line) } }, { userLimit: 1 }))
    const peer = fakePeer()
    dispatch(handlers, message('auth-attempt', { id: 1, address: '192.0.2.1', user: 'alice' }), peer)
    dispatch(handlers, message('auth-attempt', { id: 2, address: '192.0.2.1', user: 'alice' }), peer)
    dispatch(handlers, message('auth-check', { id: 3, address: '192.0.2.1', user: 'alice' }), peer)
    dispatch(handlers, message('auth-check', { id: 4, address: '192.0.2.1', user: null }), peer)
    await turn()
    assert.deepEqual(peer.sent.map((msg) => [msg.act, msg.id, msg.value]),
      [['reply', 1, 0], ['reply', 2, 300], ['reply', 3, 300], ['reply', 4, 0]])
    assert.equal(warnings.length, 1)
    assert.match(warnings[0], /"alice" from 192\.0\.2\.1 locked for 300 s/)
  })

  it('should reset on success', async () => {
    const handlers = serve(throttleServices({ log: { warn () {} } }, { userLimit: 1 }))
    const peer = fakePeer()
    dispatch(handlers, message('auth-attempt', { id: 1, address: '192.0.2.1', user: 'alice' }), peer)
    dispatch(handlers, message('auth-success', { address: '192.0.2.1', user: 'alice', counted: true }), peer)
    dispatch(handlers, message('auth-attempt', { id: 2, address: '192.0.2.1', user: 'alice' }), peer)
    await turn()
    assert.equal(peer.sent.length, 2)
    assert.equal(peer.sent[1].value, 0)
  })

  it('should refuse malformed queries without a verdict', async () => {
    const handlers = serve(throttleServices({ log: { warn () {} } }))
    const peer = fakePeer()
    for (const fields of [{}, { id: 'x', address: '1.2.3.4', user: 'a' }, { id: 1, address: 5, user: 'a' }, { id: 1, address: '1.2.3.4', user: {} }]) {
      assert.doesNotThrow(() => dispatch(handlers, message('auth-attempt', fields), peer))
      assert.doesNotThrow(() => dispatch(handlers, message('auth-success', fields), peer))
    }
    dispatch(handlers, message('auth-attempt', { id: 1, address: '1.2.3.4', user: null }), peer)
    await turn()
    // Only messages with an id get an answer; no attempt gets a verdict.
    assert.deepEqual(peer.sent.filter((msg) => msg.value !== undefined), [])
    assert.deepEqual(peer.sent.filter((msg) => msg.error !== undefined).map((msg) => msg.error),
      ['malformed auth-attempt', 'malformed auth-attempt', 'malformed auth-attempt'])
  })

  it('should keep the counters in the coordinator, across clients', async () => {
    const services = serve(throttleServices({ log: { warn () {} } }))
    const pair = inProcessPair(() => services, () => serve({}))
    const first = createThrottleClient({ coordinator: pair.b })
    for (let i = 0; i < 5; i++) assert.equal(await first.attempt('192.0.2.99', 'zed'), 0)
    assert.equal(await first.attempt('192.0.2.99', 'zed'), 300)
    // A reload builds a new pipeline and a new client: the lock stays.
    const second = createThrottleClient({ coordinator: pair.b })
    assert.equal(await second.check('192.0.2.99', 'zed'), 300)
    assert.equal(await second.check('192.0.2.98', 'zed'), 0)
  })

  it('should judge without the throttle when the coordinator is gone', async () => {
    const pair = inProcessPair(() => ({}), () => ({}))
    pair.close()
    const client = createThrottleClient({ coordinator: pair.b })
    assert.equal(await client.attempt('192.0.2.1', 'alice'), 0)
  })
})
