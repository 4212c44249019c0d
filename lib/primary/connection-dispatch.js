'use strict'

const { performance } = require('node:perf_hooks')

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
// Passed-on connections held while no worker can take one (the worker that
// passed them stopped listening, and the others are full or stalled).
// Past this, a new one is closed, as a full backlog would refuse it.
const MAX_HELD = 4096
const DROP_WARNING_MS = 10000

// Workers accept from the one kernel queue of each socket, and whichever
// worker is waiting in epoll when a burst arrives takes most of it: a load
// generator's or a browser's fifty connections often all land on one. An
// HTTP/1.1 connection over a worker's share can be sent back later
// (Connection: close, see lib/balance/worker.js), but an HTTP/2 session
// carries every request of its client for as long as it lives, so one core
// would serve while the other idles. So a worker that would hold more than
// its part passes the connection it just accepted to the primary, before a
// byte of it is read (lib/worker/shared-port.js), and the primary hands it
// to the next other worker in turn. Connections that need no moving never
// reach the primary: handing every one over cost the primary some 60 µs of
// CPU per connection and made new TLS connections per second 15-18 % fewer.
// The primary keeps its own descriptor of each connection it hands over
// until the worker acknowledges it: one handed to a worker that dies before
// taking it goes to another worker instead of being lost with the message.

/**
 * One bound socket of the Supervisor: hands the connections its workers
 * pass on to the others that listen on it, in turn.
 */
class ConnectionDispatch {
  /**
   * @param {object} log the primary's logger
   */
  constructor (log) {
    this.log = log
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
   * Give a connection to the next worker free to take one, or hold it.
   * @param {object} client an accepted TCP or Pipe handle
   */
  hand (client) {
    const intake = this.pick(null)
    if (intake === null) {
      this.hold(client)
      return
    }
    intake.give(this, client)
  }

  /**
   * A worker passed on a connection it accepted (it holds more than its
   * part): the next other worker in turn gets it, or, when none can take
   * one now, the worker that passed it, which keeps what it is handed.
   * @param {object} client an accepted TCP or Pipe handle, not yet read from
   * @param {import('./worker-intake').WorkerIntake} from
   */
  pass (client, from) {
    const intake = this.pick(from)
    if (intake !== null) {
      intake.give(this, client)
      return
    }
    if (this.intakes.includes(from)) from.give(this, client, true)
    else this.hold(client)
  }

  /**
   * @param {import('./worker-intake').WorkerIntake|null} except left out of the turn
   *   and of the fewest: a worker passing connections on has none in flight to
   *   it, and measured against it the others could have only BEHIND
   *   unacknowledged, so that a burst came back to it as soon as the other
   *   worker was a few handshakes behind (a busy machine split 50 HTTP/2
   *   sessions 44/6)
   * @returns {import('./worker-intake').WorkerIntake|null} the next in turn not too far behind; null when every one is full or stalled
   */
  pick (except) {
    const { intakes } = this
    const count = intakes.length
    const now = performance.now()
    let fewest = IN_FLIGHT_PER_WORKER
    for (let i = 0; i < count; i++) {
      const size = intakes[i].inFlight.size
      if (intakes[i] !== except && size < fewest && !stalled(intakes[i], now)) fewest = size
    }
    if (fewest === IN_FLIGHT_PER_WORKER) return null
    const most = Math.min(fewest + BEHIND, IN_FLIGHT_PER_WORKER - 1)
    for (let tried = 0; tried < count; tried++) {
      const at = (this.turn + tried) % count
      const intake = intakes[at]
      if (intake === except || intake.inFlight.size > most || stalled(intake, now)) continue
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
      const intake = this.pick(null)
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
      dispatch = new ConnectionDispatch(this.log)
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
