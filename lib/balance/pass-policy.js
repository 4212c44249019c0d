'use strict'

const { performance } = require('node:perf_hooks')

// A worker keeps a connection it accepted unless keeping it would put it
// more than this far over an even split of the connections: a tenth of the
// even split, and at least two. Two workers then end a burst of 50 HTTP/2
// sessions that all landed on one at 27/23, and a burst of 20 at 12/8.
// Under a steady churn of short connections the counts of two workers
// differ by a few at any moment, and each connection passed on then costs
// two hops for nothing: with at least one over, 12 % of such connections
// were passed on (`h2load -c20 --h1` with `Connection: close` over TLS), with
// two 8 %, with three 5 %, which splits a burst of 20 at 13/7.
const SLACK_FRACTION = 0.1
const MIN_SLACK = 2
// A connection passed on comes back when no other worker can take one: the
// others are stalled (a script blocking their event loop) or listen on
// other sockets (a reload that moves an address). Each would cost two hops
// for nothing, so the worker passes nothing on for as long as the primary
// leaves a stalled worker out.
const PAUSE_MS = 250

/**
 * Whether a worker passes a connection it just accepted on to another
 * worker (through the primary), given what it holds and what the primary
 * last told it the others hold (lib/balance/primary.js PeerLoads).
 */
class PassPolicy {
  /**
   * @param {() => number} [clock] ms, monotonic
   */
  constructor (clock = () => performance.now()) {
    this.clock = clock
    // No passing on before this time (pause).
    this.pausedUntil = -Infinity
    // Other workers that serve, and the connections they held by their last reports.
    this.peers = 0
    this.others = 0
    // Connections passed on since the primary last told the others' load:
    // theirs now, though no report of theirs says so yet.
    this.passed = 0
    this.stopped = false
  }

  /** @param {{others: number, peers: number}} load the primary's 'peer-load' */
  peerLoad (load) {
    const { others, peers } = load
    if (this.stopped || !Number.isInteger(others) || others < 0 || !Number.isInteger(peers) || peers < 0) return
    this.others = others
    this.peers = peers
    this.passed = 0
  }

  /** A connection passed on came back: keep every connection for PAUSE_MS. */
  pause () {
    this.pausedUntil = this.clock() + PAUSE_MS
  }

  /** Keep every connection from now on (the worker is stopping). */
  stop () {
    this.stopped = true
    this.peers = 0
  }

  /**
   * @param {number} open connections this worker holds, not counting the one just accepted
   * @returns {boolean} whether to pass the one just accepted on
   */
  shouldPass (open) {
    if (this.peers === 0) return false
    const mine = open + 1
    const even = (mine + this.others + this.passed) / (this.peers + 1)
    if (mine <= even + Math.max(MIN_SLACK, even * SLACK_FRACTION)) return false
    if (this.pausedUntil > -Infinity && this.clock() < this.pausedUntil) return false
    this.passed++
    return true
  }
}

module.exports = { PassPolicy, SLACK_FRACTION, MIN_SLACK, PAUSE_MS }
