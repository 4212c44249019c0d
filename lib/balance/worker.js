'use strict'

const { performance } = require('node:perf_hooks')

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
 * One worker's side of the balance: its HTTP/1 connections, reported to
 * the coordinator, and the shedding of connections above its fair share.
 * The worker's runtime holds one.
 */
class WorkerBalance {
  constructor () {
    this.policy = new ShedPolicy()
    // Open connections that have carried an HTTP/1 request: the only ones a
    // worker can hand back. HTTP/2 sessions and tunnels are not counted on
    // either side of the share, so they never make a worker shed the others.
    this.connections = 0
    this.timer = null
    this.uncount = () => { this.connections-- }
    this.shedIfOverShare = this.shedIfOverShare.bind(this)
  }

  /**
   * Report this worker's HTTP/1 connections to the coordinator every
   * REPORT_MS while they change, so that it can work out every worker's
   * fair share.
   * @param {import('../ipc').Peer} coordinator
   */
  startReports (coordinator) {
    if (this.timer !== null) clearInterval(this.timer)
    let reported = -1
    this.timer = setInterval(() => {
      this.policy.count(this.connections)
      if (this.connections !== reported && coordinator.notify('load', { connections: this.connections })) reported = this.connections
    }, REPORT_MS)
    this.timer.unref()
  }

  /** Stop reporting: the worker is done (an in-process one does not take its timers along by exiting). */
  stopReports () {
    clearInterval(this.timer)
    this.timer = null
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

module.exports = { ShedPolicy, WorkerBalance, REPORT_MS, SHED_INTERVAL_MS }
