'use strict'

const { performance } = require('node:perf_hooks')
const { PassPolicy } = require('./pass-policy')

// Workers take connections from one shared kernel queue, which favours
// whichever worker happens to be waiting: a few long-lived keep-alive
// connections (a load balancer's pool, a benchmark) can end up on one
// worker while another idles. A worker holding more than its fair share
// asks a client to reconnect, by closing its connection after the next
// response, and the reconnection goes to a worker that is free to accept it.
const REPORT_MS = 500
// At most one connection closed per interval, so a worker that keeps
// winning the reconnections does not churn.
const SHED_INTERVAL_MS = 100
// Besides the regular report, a worker whose count of open connections has
// moved by a quarter (and at least 2) since its last report tells the
// primary soon, at most once per this many ms: what the other workers hold
// decides whether a worker passes a connection on, and sessions that closed
// must not leave the others thinking it still holds them. Under a churn of
// short connections the counts move all the time, and each report wakes the
// primary and another worker: once per 5 ms made three times the messages
// of once per 20 ms for no better split, and 50 ms took the primary's CPU
// per connection from about 18 µs to 13 (h2load -c20 --h1, Connection: close).
const PROMPT_REPORT_MS = 50

/**
 * What one worker knows of the balance: its own connections (counted every
 * REPORT_MS) and the fair share the primary last told it.
 */
class ShedPolicy {
  constructor () {
    this.connections = 0
    this.fairShare = Infinity
    this.excess = 0
    this.lastShed = -Infinity
  }

  /** @param {number} connections open now */
  count (connections) {
    this.connections = connections
    this.excess = connections - this.fairShare
  }

  /** @param {number|null} share connections per worker, null: nobody to share with */
  share (share) {
    this.fairShare = typeof share === 'number' ? share : Infinity
    this.excess = this.connections - this.fairShare
  }

  /**
   * @param {number} httpVersionMajor an HTTP/2 session carries many streams and is left alone
   * @param {number} now ms, monotonic
   * @returns {boolean} whether to close this request's connection after its response
   */
  shouldShed (httpVersionMajor, now) {
    if (this.excess <= 0 || httpVersionMajor !== 1 || now - this.lastShed < SHED_INTERVAL_MS) return false
    this.lastShed = now
    this.excess--
    return true
  }
}

const kCounted = Symbol('svr.balance.counted')

/**
 * One worker's side of the balance: its connections, reported to the
 * coordinator; the shedding of HTTP/1 connections above its fair share;
 * and whether a connection it accepts is passed on to another worker
 * (lib/worker/shared-port.js). The worker's runtime holds one.
 */
class WorkerBalance {
  constructor () {
    this.policy = new ShedPolicy()
    this.passPolicy = new PassPolicy()
    // Open connections that have carried an HTTP/1 request: the only ones a
    // worker can hand back. HTTP/2 sessions and tunnels are not counted on
    // either side of the share, so they never make a worker shed the others.
    this.connections = 0
    // Every open connection of the worker's servers, from accept to close.
    this.open = 0
    this.coordinator = null
    this.timer = null
    this.reported = -1
    this.reportedOpen = -1
    this.reportedAt = -Infinity
    this.reportDue = false
    this.uncount = () => { this.connections-- }
    this.closed = () => {
      this.open--
      this.reportIfMoved()
    }
    this.opened = this.opened.bind(this)
    this.report = this.report.bind(this)
    this.shedIfOverShare = this.shedIfOverShare.bind(this)
  }

  /**
   * Count the connections of `server` (any protocol) while they are open.
   * @param {import('node:net').Server} server
   */
  watch (server) {
    server.prependListener('connection', this.opened)
  }

  opened (socket) {
    this.open++
    socket.once('close', this.closed)
    this.reportIfMoved()
  }

  /**
   * Report this worker's connections to the coordinator every REPORT_MS
   * while they change, and sooner when the open ones moved a lot, so that
   * it can work out every worker's fair share and what the others hold.
   * @param {import('../ipc').Peer} coordinator
   */
  startReports (coordinator) {
    if (this.timer !== null) clearInterval(this.timer)
    this.coordinator = coordinator
    this.timer = setInterval(() => {
      this.policy.count(this.connections)
      if (this.connections !== this.reported || this.open !== this.reportedOpen) this.report()
    }, REPORT_MS)
    this.timer.unref()
    this.report()
  }

  report () {
    this.reportDue = false
    if (this.coordinator === null) return
    this.reportedAt = performance.now()
    if (!this.coordinator.notify('load', { connections: this.connections, open: this.open })) return
    this.reported = this.connections
    this.reportedOpen = this.open
  }

  reportIfMoved () {
    if (this.reportDue || this.coordinator === null) return
    const moved = Math.abs(this.open - this.reportedOpen)
    if (moved < 2 || moved < this.reportedOpen / 4) return
    this.reportDue = true
    const wait = this.reportedAt + PROMPT_REPORT_MS - performance.now()
    if (wait > 0) setTimeout(this.report, wait).unref()
    else setImmediate(this.report)
  }

  /** Stop reporting, and keep every connection: the worker is done (an in-process one does not take its timers along by exiting). */
  stopReports () {
    clearInterval(this.timer)
    this.timer = null
    this.coordinator = null
    this.stopPassing()
  }

  /** Keep every connection accepted from now on: the worker is stopping, and the others no longer count on it. */
  stopPassing () {
    this.passPolicy.stop()
  }

  /** A connection this worker passed on came back: no other worker could take it. */
  passedBack () {
    this.passPolicy.pause()
  }

  /** @returns {boolean} whether to pass the connection this worker just accepted on to another */
  shouldPass () {
    return this.passPolicy.shouldPass(this.open)
  }

  /**
   * The coordinator's 'peer-load' message.
   * @param {{others: number, peers: number}} msg
   */
  peerLoad (msg) {
    this.passPolicy.peerLoad(msg)
  }

  /**
   * The coordinator's 'fair-share' message.
   * @param {{connections: number|null}} msg
   */
  share (msg) {
    this.policy.share(msg.connections)
  }

  /**
   * Called for every request: counts the HTTP/1 connections, and while this
   * worker holds more than its share, closes one after its response
   * (`Connection: close`).
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  shedIfOverShare (req, res) {
    if (req.httpVersionMajor !== 1) return
    const socket = req.socket
    if (socket[kCounted] !== true) {
      socket[kCounted] = true
      this.connections++
      socket.once('close', this.uncount)
    }
    const { policy } = this
    if (policy.excess > 0 && policy.shouldShed(1, performance.now())) res.shouldKeepAlive = false
  }
}

module.exports = { ShedPolicy, WorkerBalance, REPORT_MS, SHED_INTERVAL_MS, PROMPT_REPORT_MS }
