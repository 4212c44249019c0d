'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { StreamResponse } = require('../../lib/http2/stream-response')

// A stand-in for a ServerHttp2Stream: what StreamResponse reads of one.
class FakeStream extends EventEmitter {
  constructor () {
    super()
    this.destroyed = false
    this.closed = false
    this.rstCode = 0
  }

  respond () {}

  end () {
    this.closed = true
  }
}

// Every value the stream holds of its own, listeners included.
function heldBy (stream) {
  const values = Object.getOwnPropertySymbols(stream).map((symbol) => stream[symbol])
  for (const key of Object.keys(stream)) values.push(stream[key])
  for (const event of stream.eventNames()) values.push(...stream.rawListeners(event))
  return values
}

// A response on a fresh stream, with its session's count and the events it emits.
function watchedResponse () {
  const stream = new FakeStream()
  // Its session's open streams (lib/http2/streams.js), as far as a response uses them.
  const open = { open: 0, opened () { this.open++ }, closed () { this.open-- } }
  const res = new StreamResponse(stream, 'GET', open)
  const events = []
  res.on('finish', () => events.push('finish'))
  res.on('close', () => events.push('close'))
  return { stream, open, res, events }
}

describe('StreamResponse on a closed stream', () => {
  it('is no longer held by the stream, which Node may keep alive after it closed', () => {
    const { stream, open, res, events } = watchedResponse()
    assert.equal(open.open, 1)
    assert.ok(heldBy(stream).includes(res))
    res.end('hello')
    stream.emit('close')
    assert.deepEqual(events, ['finish', 'close'])
    assert.equal(open.open, 0)
    assert.equal(res.writableFinished, true)
    assert.equal(heldBy(stream).includes(res), false)
  })

  it('counts a stream reset by the client as closed, not finished', () => {
    const { stream, open, res, events } = watchedResponse()
    stream.rstCode = 8
    stream.emit('error', new Error('reset'))
    stream.emit('close')
    assert.deepEqual(events, ['close'])
    assert.equal(open.open, 0)
    assert.equal(res.writableFinished, false)
    assert.equal(heldBy(stream).includes(res), false)
  })
})
