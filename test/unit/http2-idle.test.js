'use strict'

// The idle timer of an HTTP/2 session (lib/http2/streams.js): it closes a
// session `keepAliveTimeout` after its last open stream closed, never with
// one open. The black-box side is in test/tls/http2.test.js.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { closeWhenIdle } = require('../../lib/http2/streams')

// A session as far as the timer uses it: close() is counted, 'close' ends it.
class FakeSession extends EventEmitter {
  constructor () {
    super()
    this.closes = 0
  }

  close () {
    this.closes++
  }
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

describe('the HTTP/2 idle timer', () => {
  it('closes a session that never opens a stream', async () => {
    const session = new FakeSession()
    closeWhenIdle(session, 30)
    await sleep(120)
    assert.equal(session.closes, 1)
    session.emit('close')
  })

  it('does nothing when it fires with a stream open, and closes the session that long after the stream closes', async () => {
    const session = new FakeSession()
    const streams = closeWhenIdle(session, 40)
    streams.opened()
    await sleep(120)
    assert.equal(session.closes, 0)
    streams.closed()
    await sleep(10)
    assert.equal(session.closes, 0)
    await sleep(120)
    assert.equal(session.closes, 1)
    session.emit('close')
  })

  it('is not restarted by a stream that closes once the session is gone', async () => {
    const session = new FakeSession()
    const streams = closeWhenIdle(session, 30)
    streams.opened()
    session.emit('close')
    streams.closed()
    await sleep(100)
    assert.equal(session.closes, 0)
  })

  it('keeps a timeout longer than a timer takes at the longest, instead of firing at once', async () => {
    const session = new FakeSession()
    closeWhenIdle(session, 2 ** 31)
    await sleep(50)
    assert.equal(session.closes, 0)
    session.emit('close')
  })
})
