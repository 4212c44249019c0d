'use strict'

const { performance } = require('node:perf_hooks')

// The accept backlog Node's net.Server asks for.
const BACKLOG = 511
// Connections handed to one worker that it has not yet acknowledged, at
// most: more than the burst a client opens at once (h2load's 50, a proxy's
// pool), which is then dealt out in turn; with 16, the rest of such a burst
// was held until the first acknowledgement, and all of it went to whichever
// worker gave that.
const IN_FLIGHT_PER_WORKER = 64
// Each connection goes to the next worker in turn among those with at most
// this many unacknowledged over the fewest. A worker whose event loop is
// blocked (a script in a long loop) falls that far behind after a few and
// gets none until it answers again. Workers that merely acknowledge a turn
// apart stay within it: a burst of HTTP/2 sessions, which stay where they
// land, is dealt out evenly instead of mostly to whichever worker happened
// to answer first (with the strictly fewest, 50 sessions split up to 31/19).
const BEHIND = 4
// A worker that has left a connection unacknowledged this long is stalled
// (stopped, or blocked in a long computation): it gets no more until it
// acknowledges, so that at most the connections of its first moments wait
// for it. Far longer than a busy event loop's turn.
const STALL_MS = 250
// Accepted connections held while no worker can take one (every worker
// replaced at once, or all of them busy). Past this, a new one is closed,
// as a full backlog would refuse it.
const MAX_HELD = 4096
const DROP_WARNING_MS = 10000

// When workers accept from one shared kernel queue, whichever worker is
// waiting in epoll takes the connections of a burst: a load generator's or
// a browser's fifty connections often all land on one worker. An HTTP/1.1
// connection over a worker's share can be sent back (Connection: close, see
// lib/balance/worker.js), but an HTTP/2 session carries every request of its
// client for as long as it lives, so one core serves while the other idles.
// So the primary, which holds the listening sockets anyway, accepts and
// hands each connection to the next worker in turn, before a byte of it is
// read (the TLS handshake runs in the worker). Unlike Node's round-robin
// scheduling, the primary keeps its own descriptor of each connection
// until the worker acknowledges it: one handed to a worker that dies before
// taking it goes to another worker instead of being lost with the message.

/**
 * One bound socket of the Supervisor: accepts its connections and hands
 * them to the workers that listen on it, in turn.
 */
class ConnectionDispatch {
  /**
   * @param {object} handle a bound TCP or Pipe handle (lib/primary/listen-sockets.js)
   * @param {object} log the primary's logger
   */
  constructor (handle, log) {
    this.handle = handle
    this.log = log
    this.listening = false
    this.closed = false
    // WorkerIntakes (./worker-intake.js) whose worker listens on this socket, in the order of the round.
    this.intakes = []
    this.turn = 0
    // Accepted connections waiting for a worker, oldest first.
    this.held = []
    this.dropped = 0
    this.droppedWarnedAt = -Infinity
  }

  /**
   * Put the socket in the listening state, once.
   * @returns {number} 0, or the libuv error of listen()
   */
  start () {
    if (this.listening || this.closed) return 0
    this.handle.onconnection = (err, client) => {
      // An accept that failed (EMFILE, say) leaves the connection in the backlog.
      if (err === 0 && client !== undefined) this.hand(client)
    }
    const err = this.handle.listen(BACKLOG)
    if (err === 0) this.listening = true
    return err
  }

  /**
   * Give a connection to the next worker free to take one, or hold it.
   * @param {object} client an accepted TCP or Pipe handle
   */
  hand (client) {
    const intake = this.pick()
    if (intake === null) {
      this.hold(client)
      return
    }
    intake.give(this, client)
  }

  /** @returns {import('./worker-intake').WorkerIntake|null} the next in turn not too far behind; null when every one is full or stalled */
  pick () {
    const { intakes } = this
    const count = intakes.length
    const now = performance.now()
    let fewest = IN_FLIGHT_PER_WORKER
    for (let i = 0; i < count; i++) {
      const size = intakes[i].inFlight.size
      if (size < fewest && !stalled(intakes[i], now)) fewest = size
    }
    if (fewest === IN_FLIGHT_PER_WORKER) return null
    const most = Math.min(fewest + BEHIND, IN_FLIGHT_PER_WORKER - 1)
    for (let tried = 0; tried < count; tried++) {
      const at = (this.turn + tried) % count
      const intake = intakes[at]
      if (intake.inFlight.size > most || stalled(intake, now)) continue
      this.turn = (at + 1) % count
      return intake
    }
    return null
  }

  hold (client) {
    if (this.closed) {
      client.close()
      return
    }
    if (this.held.length >= MAX_HELD) {
      client.close()
      this.dropped++
      const now = Date.now()
      if (now - this.droppedWarnedAt >= DROP_WARNING_MS) {
        this.droppedWarnedAt = now
        this.log.warn(this.dropped + ' connection(s) closed unanswered: ' + MAX_HELD + ' were already waiting for a worker')
        this.dropped = 0
      }
      return
    }
    this.held.push(client)
  }

  /** Hand held connections to workers with room for them. */
  release () {
    while (this.held.length !== 0) {
      const intake = this.pick()
      if (intake === null) return
      intake.give(this, this.held.shift())
    }
  }

  /** @param {import('./worker-intake').WorkerIntake} intake a worker that now listens on this socket */
  add (intake) {
    if (this.closed) return
    if (!this.intakes.includes(intake)) this.intakes.push(intake)
    this.release()
  }

  /** @param {import('./worker-intake').WorkerIntake} intake a worker that no longer takes this socket's connections */
  remove (intake) {
    const at = this.intakes.indexOf(intake)
    if (at !== -1) this.intakes.splice(at, 1)
  }

  /** The socket is closed: nobody can be handed what it held. */
  close () {
    this.closed = true
    this.intakes = []
    for (const client of this.held) client.close()
    this.held = []
  }
}

// A worker that has left a connection unacknowledged for STALL_MS.
function stalled (intake, now) {
  return intake.inFlight.size !== 0 && now - intake.oldestAt() > STALL_MS
}

/**
 * The dispatches of one Supervisor, one per bound socket, made on first use.
 */
class ConnectionDispatches {
  constructor (log) {
    this.log = log
    this.dispatches = new Map()
  }

  /**
   * @param {object} handle a bound TCP or Pipe handle
   * @returns {ConnectionDispatch}
   */
  of (handle) {
    let dispatch = this.dispatches.get(handle)
    if (dispatch === undefined) {
      dispatch = new ConnectionDispatch(handle, this.log)
      this.dispatches.set(handle, dispatch)
    }
    return dispatch
  }

  /** @param {object} handle closed by ListenSockets */
  closed (handle) {
    const dispatch = this.dispatches.get(handle)
    if (dispatch === undefined) return
    this.dispatches.delete(handle)
    dispatch.close()
  }
}

module.exports = { ConnectionDispatch, ConnectionDispatches, IN_FLIGHT_PER_WORKER, BEHIND, MAX_HELD, STALL_MS }
