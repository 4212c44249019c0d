'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { ConnectionDispatch, IN_FLIGHT_PER_WORKER, BEHIND, MAX_HELD, STALL_MS } = require('../../lib/primary/connection-dispatch')
const { WorkerIntake } = require('../../lib/primary/worker-intake')

function client (name) {
  return { name, closed: false, close () { this.closed = true } }
}

// A worker's Peer: records what it is sent; `up` false once its channel is gone.
function peer () {
  return {
    up: true,
    sent: [],
    notify (act, fields, handle) {
      if (!this.up) return false
      this.sent.push({ act, ...fields, handle })
      return true
    }
  }
}

function setup (workers, log = { warn () {} }) {
  const dispatch = new ConnectionDispatch(log)
  const intakes = []
  for (let i = 0; i < workers; i++) {
    const intake = new WorkerIntake(peer())
    intake.assign('main', dispatch)
    intake.listening('main', true)
    intakes.push(intake)
  }
  // A connection to hand out (one a dead worker had not taken, say).
  const accept = (name) => {
    const c = client(name)
    dispatch.hand(c)
    return c
  }
  // A connection the worker `from` passed on.
  const pass = (name, from) => {
    const c = client(name)
    dispatch.pass(c, intakes[from])
    return c
  }
  return { dispatch, intakes, accept, pass }
}

// The names of the connections each worker was handed, in order.
const handed = (intakes) => intakes.map((intake) => intake.peer.sent.filter((m) => m.act === 'conn').map((m) => m.handle.name))
const ackAll = (intake, taken = true) => {
  for (const m of intake.peer.sent.filter((m) => m.act === 'conn')) intake.acknowledged({ ids: [m.id], taken })
}

describe('ConnectionDispatch and WorkerIntake', () => {
  it('should hand connections to the workers in turn', () => {
    const { intakes, accept } = setup(3)
    for (let i = 0; i < 6; i++) {
      accept('c' + i)
      // Acknowledged at once: every worker has room, the turn alone decides.
      for (const intake of intakes) ackAll(intake)
    }
    assert.deepEqual(handed(intakes), [['c0', 'c3'], ['c1', 'c4'], ['c2', 'c5']])
    assert.deepEqual(intakes[0].peer.sent[0], { act: 'conn', role: 'main', id: 1, handle: intakes[0].peer.sent[0].handle })
  })

  it('should close its own descriptor once a worker took the connection, and not before', async () => {
    const { intakes, accept } = setup(1)
    const c = accept('c')
    // Node may still hold the message in its queue of handles to send.
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(c.closed, false)
    intakes[0].acknowledged({ ids: [1], taken: true })
    assert.equal(c.closed, true)
    // A repeated or unknown acknowledgement changes nothing.
    intakes[0].acknowledged({ ids: [1], taken: false })
    assert.deepEqual(handed(intakes), [['c']])
  })

  it('should give each connection to the next worker in turn, leaving out one more than ' + BEHIND + ' unacknowledged behind the fewest', () => {
    const { intakes, accept } = setup(2)
    // Worker 0 is blocked and acknowledges nothing; worker 1 everything at once.
    const count = 2 * (BEHIND + 1) + 4
    for (let i = 0; i < count; i++) {
      accept('c' + i)
      ackAll(intakes[1])
    }
    const names = Array.from({ length: count }, (_, i) => 'c' + i)
    // In turn until worker 0 has BEHIND + 1 waiting, then none for it.
    const blocked = names.filter((name, i) => i % 2 === 0 && i < 2 * (BEHIND + 1))
    assert.deepEqual(handed(intakes), [blocked, names.filter((name) => !blocked.includes(name))])
    // It answers: it is back in the round.
    ackAll(intakes[0])
    accept('d0')
    accept('d1')
    assert.deepEqual(handed(intakes).map((list) => list.filter((name) => name.startsWith('d'))), [['d0'], ['d1']])
  })

  // HTTP/2 sessions stay on the worker they were handed to: a burst must not
  // go mostly to whichever worker acknowledged sooner.
  it('should deal a burst out in turn while the workers acknowledge at different paces', () => {
    const { intakes, accept } = setup(2)
    for (let i = 0; i < 50; i++) {
      accept('c' + i)
      if (i % 3 === 2) ackAll(intakes[1])
      if (i % 7 === 6) ackAll(intakes[0])
    }
    assert.deepEqual(handed(intakes).map((list) => list.length), [25, 25])
  })

  it('should hold connections while every worker has ' + IN_FLIGHT_PER_WORKER + ' unacknowledged, and hand the oldest on at the next acknowledgement', () => {
    const { dispatch, intakes, accept } = setup(2)
    for (let i = 0; i < 2 * IN_FLIGHT_PER_WORKER + 3; i++) accept('c' + i)
    assert.deepEqual(handed(intakes).map((names) => names.length), [IN_FLIGHT_PER_WORKER, IN_FLIGHT_PER_WORKER])
    // A burst is dealt out in turn.
    assert.deepEqual(handed(intakes)[0].slice(0, 3), ['c0', 'c2', 'c4'])
    const held = [0, 1, 2].map((i) => 'c' + (2 * IN_FLIGHT_PER_WORKER + i))
    assert.deepEqual(dispatch.held.map((c) => c.name), held)
    const oldest = intakes[1].peer.sent.find((m) => m.act === 'conn')
    intakes[1].acknowledged({ ids: [oldest.id], taken: true })
    assert.equal(handed(intakes)[1].at(-1), held[0])
    assert.deepEqual(dispatch.held.map((c) => c.name), held.slice(1))
  })

  it('should leave out a worker that has left a connection unacknowledged for ' + STALL_MS + ' ms, until it acknowledges', () => {
    const { intakes, accept } = setup(2)
    accept('a')
    accept('b')
    // Worker 0 is stopped: 'a' has waited past the limit. Worker 1 is busy
    // but answering: 'b' has waited just under it.
    const entries = intakes.map((intake) => intake.inFlight.values().next().value)
    entries[0].at -= STALL_MS + 1
    entries[1].at -= STALL_MS - 50
    accept('c')
    accept('d')
    assert.deepEqual(handed(intakes), [['a'], ['b', 'c', 'd']])
    ackAll(intakes[0])
    accept('e')
    assert.deepEqual(handed(intakes), [['a', 'e'], ['b', 'c', 'd']])
  })

  it('should give a connection a worker did not take to another, and leave that worker out until it listens again', () => {
    const { intakes, accept } = setup(2)
    accept('a')
    // Worker 0's server has stopped listening.
    intakes[0].acknowledged({ ids: [1], taken: false })
    assert.deepEqual(handed(intakes), [['a'], ['a']])
    accept('b')
    accept('c')
    assert.deepEqual(handed(intakes), [['a'], ['a', 'b', 'c']])
    intakes[0].listening('main', true)
    // Back in the round, after worker 1, whose three not yet acknowledged are within BEHIND.
    accept('d')
    accept('e')
    assert.deepEqual(handed(intakes), [['a', 'e'], ['a', 'b', 'c', 'd']])
  })

  it('should hand what a lost worker had not acknowledged to the others, and nothing it took', () => {
    const { intakes, accept } = setup(2)
    const a = accept('a')
    accept('b')
    accept('c')
    intakes[0].acknowledged({ ids: [1], taken: true })
    intakes[0].lost()
    // 'a' was taken (and its descriptor closed here); 'c' was not.
    assert.equal(a.closed, true)
    assert.deepEqual(handed(intakes), [['a', 'c'], ['b', 'c']])
    accept('d')
    assert.deepEqual(handed(intakes)[1], ['b', 'c', 'd'])
    // A worker that lists itself again after it was lost is not taken back.
    intakes[0].listening('main', true)
    accept('e')
    assert.deepEqual(handed(intakes)[0], ['a', 'c'])
  })

  it('should take one acknowledgement for the connections of a whole turn, skipping ids it does not know', () => {
    const { dispatch, intakes, accept } = setup(1)
    const clients = [accept('a'), accept('b'), accept('c')]
    intakes[0].acknowledged({ ids: [1, 3, 99], taken: true })
    assert.deepEqual(clients.map((c) => c.closed), [true, false, true])
    assert.deepEqual([...intakes[0].inFlight.keys()], [2])
    // A malformed message changes nothing.
    intakes[0].acknowledged({ id: 2, taken: true })
    assert.deepEqual([...intakes[0].inFlight.keys()], [2])
    assert.deepEqual(dispatch.intakes, intakes)
  })

  it('should hand a connection on when the worker\'s channel is gone', () => {
    const { intakes, accept } = setup(2)
    intakes[0].peer.up = false
    accept('a')
    accept('b')
    assert.deepEqual(handed(intakes), [[], ['a', 'b']])
  })

  it('should hold connections while no worker listens, and hand them out once one does', () => {
    const dispatch = new ConnectionDispatch({ warn () {} })
    const intake = new WorkerIntake(peer())
    intake.assign('main', dispatch)
    intake.listening('main', true)
    intake.leave()
    dispatch.hand(client('a'))
    dispatch.hand(client('b'))
    assert.deepEqual(dispatch.held.map((c) => c.name), ['a', 'b'])
    intake.listening('main', true)
    assert.deepEqual(handed([intake]), [['a', 'b']])
  })

  it('should close connections past ' + MAX_HELD + ' held, and warn', () => {
    const warnings = []
    const dispatch = new ConnectionDispatch({ warn: (line) => warnings.push(line) })
    const intake = new WorkerIntake(peer())
    intake.assign('main', dispatch)
    intake.listening('main', true)
    intake.leave()
    const clients = []
    for (let i = 0; i < MAX_HELD + 2; i++) {
      clients.push(client('c' + i))
      dispatch.hand(clients[i])
    }
    assert.equal(dispatch.held.length, MAX_HELD)
    assert.deepEqual(clients.map((c) => c.closed).lastIndexOf(false), MAX_HELD - 1)
    assert.equal(clients.filter((c) => c.closed).length, 2)
    assert.deepEqual(warnings, ['1 connection(s) closed unanswered: ' + MAX_HELD + ' were already waiting for a worker'])
  })

  it('should close what it holds when the socket closes, and what comes after', () => {
    const dispatch = new ConnectionDispatch({ warn () {} })
    const held = client('a')
    dispatch.hand(held)
    dispatch.close()
    assert.equal(held.closed, true)
    const late = client('b')
    dispatch.hand(late)
    assert.equal(late.closed, true)
    // A worker that listens on a closed socket's dispatch gets nothing.
    const intake = new WorkerIntake(peer())
    intake.assign('main', dispatch)
    intake.listening('main', true)
    assert.deepEqual(dispatch.intakes, [])
  })

  it('should give a passed-on connection to the next other worker in turn, never back to the one that passed it while another has room', () => {
    const { intakes, pass } = setup(3)
    for (let i = 0; i < 4; i++) {
      pass('p' + i, 0)
      for (const intake of intakes) ackAll(intake)
    }
    pass('q', 1)
    assert.deepEqual(handed(intakes), [['q'], ['p0', 'p2'], ['p1', 'p3']])
  })

  it('should give passed-on connections to another worker however many it has not yet acknowledged, up to its limit', () => {
    const { intakes, pass } = setup(2)
    // A burst: the passer has none in flight, the other acknowledges later.
    for (let i = 0; i < 3 * BEHIND; i++) pass('x' + i, 0)
    assert.equal(handed(intakes)[1].length, 3 * BEHIND)
    assert.deepEqual(handed(intakes)[0], [])
  })

  it('should give a passed-on connection back to the worker that passed it when no other can take one', () => {
    const { intakes, pass } = setup(2)
    // The other worker has as many unacknowledged as it may have.
    for (let i = 0; i < IN_FLIGHT_PER_WORKER; i++) pass('x' + i, 0)
    assert.equal(handed(intakes)[1].length, IN_FLIGHT_PER_WORKER)
    pass('back', 0)
    assert.deepEqual(handed(intakes)[0], ['back'])
    assert.equal(handed(intakes)[1].length, IN_FLIGHT_PER_WORKER)
    // The worker is told it came back (it then passes nothing on for a while); the others are not.
    assert.deepEqual(intakes[0].peer.sent.map((m) => m.back), [true])
    assert.deepEqual(new Set(intakes[1].peer.sent.map((m) => m.back)), new Set([undefined]))
  })

  it('should give a passed-on connection back to the worker that passed it when the other is stalled', () => {
    const { intakes, pass } = setup(2)
    pass('first', 0)
    intakes[1].inFlight.values().next().value.at -= STALL_MS + 1
    pass('back', 0)
    assert.deepEqual(handed(intakes), [['back'], ['first']])
  })

  it('should hold a passed-on connection when its worker has left and no other can take one, and close it when the socket closes', () => {
    const { dispatch, intakes, pass } = setup(2)
    intakes[1].leave()
    intakes[0].leave()
    const c = pass('late', 0)
    assert.deepEqual(dispatch.held.map((held) => held.name), ['late'])
    dispatch.close()
    assert.equal(c.closed, true)
  })
})
