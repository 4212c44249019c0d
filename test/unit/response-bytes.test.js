'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const net = require('node:net')
const { performance } = require('node:perf_hooks')
const { kContext, reportWhenOver, connectionBytes } = require('../../lib/pipeline/request/response-bytes')

// The fields of a RequestContext that the byte count reads and writes.
function contextOf (req, res) {
  const ctx = { req, res, method: req.method, start: performance.now(), socket: null, sentBefore: -1, sentAfter: -1, bytes: 0 }
  res[kContext] = ctx
  return ctx
}

describe('reportWhenOver(ctx, accessLog) over HTTP/1.1', () => {
  it('should report a response the application ends after its client has gone, without throwing', async (t) => {
    const reports = []
    let ended = null
    const server = http.createServer((req, res) => {
      reportWhenOver(contextOf(req, res), { worker: 1, report: (ctx) => reports.push({ status: ctx.status, bytes: ctx.bytes }) })
      // The client leaves first; the application answers late, as a
      // directory listing read from a slow disk does.
      res.once('close', () => setImmediate(() => {
        try {
          res.end('late')
          ended = 'ended'
        } catch (err) {
          ended = err
        }
      }))
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(() => server.close())
    const socket = net.connect(server.address().port, '127.0.0.1')
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
    for (let i = 0; i < 100 && ended === null; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(ended, 'ended')
    assert.deepEqual(reports, [{ status: 499, bytes: 0 }])
  })
})

describe('connectionBytes(socket)', () => {
  it('should be the socket\'s bytesWritten while it connects, between writes and with writes queued', async (t) => {
    const server = net.createServer((peer) => peer.resume())
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(() => server.close())
    const socket = net.connect(server.address().port, '127.0.0.1')
    t.after(() => socket.destroy())
    // Held until the connection is made.
    socket.write('abc')
    assert.equal(connectionBytes(socket), 3)
    await new Promise((resolve) => socket.once('connect', resolve))
    await new Promise((resolve) => socket.write('de', resolve))
    assert.equal(connectionBytes(socket), 5)
    // Queued behind the cork, not yet handed to the system.
    socket.cork()
    socket.write('fghi')
    assert.equal(connectionBytes(socket), 9)
    await new Promise((resolve) => {
      socket.write('', resolve)
      socket.uncork()
    })
    assert.equal(connectionBytes(socket), 9)
  })
})
