'use strict'

const { describe, it, mock } = require('node:test')
const assert = require('node:assert/strict')
const { message, dispatch, NS, serve, inProcessPair } = require('../../lib/ipc')

describe('ipc', () => {
  it('should tag messages with the namespace and act', () => {
    assert.deepEqual(message('listening', { pid: 1 }), { ns: NS, act: 'listening', pid: 1 })
  })

  it('should dispatch a tagged message to the handler of its act', () => {
    const handler = mock.fn()
    assert.equal(dispatch({ boot: handler }, message('boot', { x: 1 }), 'extra'), true)
    assert.equal(handler.mock.callCount(), 1)
    assert.deepEqual(handler.mock.calls[0].arguments, [message('boot', { x: 1 }), 'extra'])
  })

  it('should ignore foreign messages, unknown acts and inherited names', () => {
    const handler = mock.fn()
    const table = { boot: handler }
    assert.equal(dispatch(table, 'boot'), false)
    assert.equal(dispatch(table, null), false)
    assert.equal(dispatch(table, { act: 'boot' }), false)
    assert.equal(dispatch(table, message('shutdown')), false)
    assert.equal(dispatch(table, message('toString')), false)
    assert.equal(handler.mock.callCount(), 0)
  })
})

describe('request and reply', () => {
  function pair (services) {
    return inProcessPair(() => serve(services), () => serve({}))
  }

  it('should resolve with what the service returned, sync or async', async () => {
    const { b } = pair({ sum: (msg) => msg.x + msg.y, later: async (msg) => msg.x * 2 })
    assert.equal(await b.request('sum', { x: 2, y: 3 }, { timeout: 1000 }), 5)
    assert.equal(await b.request('later', { x: 4 }, { timeout: 1000 }), 8)
    assert.equal(b.pending.size, 0)
  })

  it('should reject with the service error, coded', async () => {
    const { b } = pair({ fail () { throw new Error('no such thing') } })
    await assert.rejects(b.request('fail', {}, { timeout: 1000 }),
      { code: 'SVR_ERR_IPC_FAILED', message: 'fail failed in the other process: no such thing' })
  })

  it('should reject when nobody answers in time, and drop the late answer', async () => {
    let answer
    const { b } = pair({ slow: () => new Promise((resolve) => { answer = resolve }) })
    await assert.rejects(b.request('slow', {}, { timeout: 20 }), { code: 'SVR_ERR_IPC_TIMEOUT', message: 'no answer to slow within 20 ms' })
    assert.equal(b.pending.size, 0, 'nothing waits once the request timed out')
    const settle = mock.method(b, 'settle')
    answer(1)
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(settle.mock.callCount(), 1, 'the late answer arrived')
    assert.equal(b.pending.size, 0)
  })

  it('should reject at once when the other end is gone', async () => {
    const channel = pair({ sum: () => 1 })
    channel.close()
    await assert.rejects(channel.b.request('sum', {}, { timeout: 60000 }), { code: 'SVR_ERR_IPC_GONE' })
    assert.equal(channel.b.pending.size, 0)
  })

  it('should answer a notice (no id) with nothing', async () => {
    const seen = mock.fn()
    const { a, b } = pair({ note: seen })
    const sent = mock.method(a, 'send')
    assert.equal(b.notify('note', { x: 1 }), true)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(seen.mock.callCount(), 1)
    assert.equal(sent.mock.callCount(), 0)
  })
})
