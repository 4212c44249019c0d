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
let timer = null

/**
 * Report this worker's open connections to the primary every REPORT_MS
 * while they change, so that it can work out every worker's fair share.
 * @param {import('node:net').Server[]} servers
 */
function startLoadReports (servers) {
  if (timer !== null) clearInterval(timer)
  let reported = -1
  timer = setInterval(() => {
    countConnections(servers).then((connections) => {
      policy.count(connections)
      if (connections !== reported && process.connected) {
        reported = connections
        process.send(message('load', { connections }))
      }
    })
  }, REPORT_MS)
  timer.unref()
}

function countConnections (servers) {
  return Promise.all(servers.map((server) => new Promise((resolve) => {
    server.getConnections((err, count) => resolve(err ? 0 : count))
  }))).then((counts) => counts.reduce((sum, count) => sum + count, 0))
}

/**
 * The primary's 'fair-share' message.
 * @param {{connections: number|null}} msg
 */
function setFairShare (msg) {
  policy.share(msg.connections)
}

/**
 * Called for every request: while this worker holds more than its share,
 * an HTTP/1 connection is closed after its response (`Connection: close`).
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
function shedIfOverShare (req, res) {
  if (policy.excess > 0 && policy.shouldShed(req.httpVersionMajor, performance.now())) res.shouldKeepAlive = false
}

module.exports = { ShedPolicy, startLoadReports, setFairShare, shedIfOverShare, REPORT_MS, SHED_INTERVAL_MS }
