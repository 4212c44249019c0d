'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { SharedPort } = require('../../lib/worker/shared-port')
const { Supervisor } = require('../../lib/primary/supervisor')
const { handBackOnLoss } = require('../../lib/primary/worker-slots')
const { ConnectionDispatch } = require('../../lib/primary/connection-dispatch')
const { WorkerIntake } = require('../../lib/primary/worker-intake')

function client (name) {
  return { name, closed: 0, close () { this.closed++ } }
}

// The bound socket's handle: records listen() and close().
function boundHandle (listenError = 0) {
  return {
    onconnection: null,
    backlog: null,
    closed: false,
    listen (backlog) { this.backlog = backlog; return listenError },
    close (callback) { this.closed = true; if (callback) process.nextTick(callback) },
    getsockname (out) { out.port = 8080; return 0 }
  }
}

// The primary, as a worker's Peer: records what it is sent, and the write callbacks.
function primary (up = true) {
  return {
    sent: [],
    written: [],
    notify (act, fields, handle, written) {
      if (!up) return false
      this.sent.push({ act, ...fields, handle: handle && handle.name })
      if (written) this.written.push(written)
      return true
    }
  }
}

// A port listening as a worker's server would have it, with what Node's
// onconnection was given.
function listeningPort ({ pass = false, coordinator = primary() } = {}) {
  const handle = boundHandle()
  const served = []
  const port = new SharedPort('main', handle, coordinator, { shouldPass: () => pass })
  port.onconnection = (err, c) => served.push([err, c.name])
  assert.equal(port.listen(511), 0)
  return { port, handle, served, coordinator }
}

describe('SharedPort', () => {
  it('should listen on the shared handle and tell the primary, and answer for its address', () => {
    const { port, handle, coordinator } = listeningPort()
    assert.equal(handle.backlog, 511)
    assert.equal(typeof handle.onconnection, 'function')
    assert.deepEqual(coordinator.sent, [{ act: 'port-open', role: 'main', handle: undefined }])
    const out = {}
    assert.equal(port.getsockname(out), 0)
    assert.deepEqual(out, { port: 8080 })
  })

  it('should return the error of a failed listen, and tell the primary nothing', () => {
    const coordinator = primary()
    const port = new SharedPort('main', boundHandle(-98), coordinator, { shouldPass: () => false })
    assert.equal(port.listen(511), -98)
    assert.deepEqual(coordinator.sent, [])
    assert.equal(port.take(client('a')), false)
  })

  it('should give a connection it keeps to the server, and leave a failed accept alone', () => {
    const { handle, served } = listeningPort()
    handle.onconnection(-24, undefined)
    handle.onconnection(0, client('a'))
    assert.deepEqual(served, [[0, 'a']])
  })

  it('should pass a connection on to the primary, closing its copy only once the message is written', () => {
    const { handle, served, coordinator } = listeningPort({ pass: true })
    const c = client('a')
    handle.onconnection(0, c)
    assert.deepEqual(served, [])
    assert.deepEqual(coordinator.sent.slice(1), [{ act: 'conn-pass', role: 'main', handle: 'a' }])
    assert.equal(c.closed, 0)
    coordinator.written[0](null)
    assert.equal(c.closed, 1)
  })

  it('should keep a connection whose message could not be written, or when the primary is gone', () => {
    const { handle, served, coordinator } = listeningPort({ pass: true })
    const a = client('a')
    handle.onconnection(0, a)
    coordinator.written[0](new Error('EPIPE'))
    assert.equal(a.closed, 0)
    const gone = listeningPort({ pass: true, coordinator: primary(false) })
    gone.handle.onconnection(0, client('b'))
    assert.deepEqual([served, gone.served], [[[0, 'a']], [[0, 'b']]])
  })

  it('should take connections the primary hands over only while it listens, and say once that it closed', async () => {
    const { port, handle, served, coordinator } = listeningPort({ pass: true })
    assert.equal(port.take(client('handed')), true)
    assert.deepEqual(served, [[0, 'handed']], 'a handed connection is never passed on again')
    await new Promise((resolve) => port.close(resolve))
    port.close()
    assert.equal(handle.closed, true)
    assert.deepEqual(coordinator.sent.map((m) => m.act), ['port-open', 'port-closed'])
    assert.equal(port.take(client('late')), false)
  })
})

describe('a connection passed on by a worker whose exit came before its last messages', () => {
  it('should still go to another worker, until the dead one\'s channel has closed', () => {
    const dispatch = new ConnectionDispatch({ warn () {} })
    const peers = [[], []]
    const intakes = peers.map((sent) => new WorkerIntake({ notify: (act, fields, handle) => sent.push([act, handle.name]) > 0 }))
    for (const intake of intakes) {
      intake.assign('main', dispatch)
      intake.listening('main', true)
    }
    const dead = new EventEmitter()
    // What the Supervisor keeps and does (lib/primary/worker-slots.js).
    const supervisor = { intakes: new Map([[dead, intakes[0]]]), records: new Map(), intakeOf: Supervisor.prototype.intakeOf }
    handBackOnLoss(dead, intakes[0], () => supervisor.intakes.delete(dead))
    dead.emit('exit', null, 'SIGKILL')
    Supervisor.prototype.onPass.call(supervisor, dead, 'main', client('late'))
    assert.deepEqual(peers, [[], [['conn', 'late']]])
    dead.emit('disconnect')
    assert.equal(supervisor.intakes.size, 0)
    const after = client('after')
    Supervisor.prototype.onPass.call(supervisor, dead, 'main', after)
    assert.equal(after.closed, 1, 'from a worker the primary no longer knows: closed')
  })

  it('should not take a socket object some code sent with a message of ours for a connection', () => {
    let destroyed = 0
    const supervisor = { intakes: new Map(), intakeOf: Supervisor.prototype.intakeOf }
    Supervisor.prototype.onPass.call(supervisor, {}, 'main', { destroy () { destroyed++ } })
    assert.equal(destroyed, 1)
  })
})
