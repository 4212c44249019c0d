'use strict'

const { describe, it, mock } = require('node:test')
const assert = require('node:assert/strict')
const { message, dispatch, NS } = require('../../lib/ipc')

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
