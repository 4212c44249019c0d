'use strict'

/**
 * Whether this worker should be sent traffic: what the health path reports.
 * One per pipeline; the server marks it draining when a graceful shutdown
 * begins, before it stops accepting connections.
 */
class Lifecycle {
  /**
   * @param {number} readyDelay ms after listening before the worker reports ready
   */
  constructor (readyDelay) {
    this.readyDelay = readyDelay
    // Until listening starts the worker is not ready at all.
    this.readyAt = Infinity
    this.draining = false
  }

  listening (now = Date.now()) {
    this.readyAt = now + this.readyDelay
  }

  drain () {
    this.draining = true
  }

  /**
   * @returns {'ok'|'starting'|'draining'}
   */
  state (now = Date.now()) {
    if (this.draining) return 'draining'
    return now >= this.readyAt ? 'ok' : 'starting'
  }
}

module.exports = { Lifecycle }
