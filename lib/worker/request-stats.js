'use strict'

/**
 * Request counters of one worker, for the status page. The worker's
 * runtime holds them, so they survive a pipeline swap on reload; the
 * coordinator adds up the counters of every worker when the status page asks.
 */
class RequestStats {
  constructor () {
    this.counters = {
      started: Date.now(),
      requests: 0,
      status4xx: 0,
      status5xx: 0,
      malformed: 0
    }
    const { counters } = this
    // One listener for every response of this worker, no closure per request.
    this.countResponse = function countResponse () {
      const status = this.statusCode
      if (status >= 500) counters.status5xx++
      else if (status >= 400) counters.status4xx++
    }
  }

  /**
   * @param {import('node:http').ServerResponse} res
   */
  countRequest (res) {
    this.counters.requests++
    res.on('finish', this.countResponse)
  }

  countMalformed () {
    this.counters.malformed++
    this.counters.status4xx++
  }

  /** @returns {object} a snapshot safe to send over IPC */
  snapshot () {
    const memory = process.memoryUsage()
    const cpu = process.cpuUsage()
    return {
      pid: process.pid,
      ...this.counters,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      cpuUser: cpu.user,
      cpuSystem: cpu.system
    }
  }
}

module.exports = { RequestStats }
