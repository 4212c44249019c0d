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
