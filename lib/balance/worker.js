'use strict'

const { performance } = require('node:perf_hooks')
const { message } = require('../ipc')

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

const policy = new ShedPolicy()
const kCounted = Symbol('svr.balance.counted')
// Open connections that have carried an HTTP/1 request: the only ones a
// worker can hand back. HTTP/2 sessions and tunnels are not counted on
// either side of the share, so they never make a worker shed the others.
let http1Connections = 0
let timer = null

function uncount () {
  http1Connections--
}

/**
 * Report this worker's HTTP/1 connections to the primary every REPORT_MS
 * while they change, so that it can work out every worker's fair share.
 */
function startLoadReports () {
  if (timer !== null) clearInterval(timer)
  let reported = -1
  timer = setInterval(() => {
    policy.count(http1Connections)
    if (http1Connections !== reported && process.connected) {
      reported = http1Connections
      process.send(message('load', { connections: http1Connections }))
    }
  }, REPORT_MS)
  timer.unref()
}

/**
 * The primary's 'fair-share' message.
 * @param {{connections: number|null}} msg
 */
function setFairShare (msg) {
  policy.share(msg.connections)
}

/**
 * Called for every request: counts the HTTP/1 connections, and while this
 * worker holds more than its share, closes one after its response
 * (`Connection: close`).
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
function shedIfOverShare (req, res) {
  if (req.httpVersionMajor !== 1) return
  const socket = req.socket
  if (socket[kCounted] !== true) {
    socket[kCounted] = true
    http1Connections++
    socket.once('close', uncount)
  }
  if (policy.excess > 0 && policy.shouldShed(1, performance.now())) res.shouldKeepAlive = false
}

module.exports = { ShedPolicy, startLoadReports, setFairShare, shedIfOverShare, REPORT_MS, SHED_INTERVAL_MS }
