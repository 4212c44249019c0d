'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { startWorker } = require('../../lib/worker/worker')

// The worker end of a channel whose other end is gone without a
// 'disconnect': what Node leaves when the primary dies while a descriptor
// the worker sent is not yet acknowledged.
class SilentChannel extends EventEmitter {
  constructor () {
    super()
    this.connected = true
  }

  send () {
    return this.connected
  }
}

describe('a worker whose primary is gone', () => {
  it('should stop within about a second though its channel never says disconnect', async () => {
    const channel = new SilentChannel()
    const exited = new Promise((resolve) => {
      startWorker({ channel, slot: 1, name: 'worker 1', exit: resolve, processMetrics: null })
    })
    const startedAt = Date.now()
    channel.connected = false
    let timer
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, 3000, 'still running after 3 s') })
    const code = await Promise.race([exited, timeout])
    clearTimeout(timer)
    assert.equal(code, 0)
    assert.ok(Date.now() - startedAt < 2500, 'stopped after ' + (Date.now() - startedAt) + ' ms')
  })
})

describe('a connection the primary hands back to the worker that passed it on', () => {
  it('should keep the worker from passing any on for a while', async () => {
    const channel = new SilentChannel()
    const { runtime, abort } = startWorker({ channel, slot: 1, name: 'worker 1', exit () {}, processMetrics: null })
    try {
      runtime.balance.peerLoad({ others: 0, peers: 1 })
      runtime.balance.open = 10
      assert.equal(runtime.balance.shouldPass(), true)
      let closed = 0
      channel.emit('message', { ns: 'svr', act: 'conn', role: 'main', id: 1, back: true }, { close () { closed++ } })
      assert.equal(runtime.balance.shouldPass(), false)
      assert.equal(closed, 1, 'no server of that role listens here: closed, and the primary told')
    } finally {
      abort()
      runtime.release()
    }
  })
})
