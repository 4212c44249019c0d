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
      countStatus(counters, this.statusCode)
    }
  }

  /**
   * @param {import('node:http').ServerResponse} res
   * @param {boolean} [reported] whether the access log reports the response
   *   once it is over, and counts its status then (countFinished): a
   *   listener fewer, and one call with a listener fewer, a response
   */
  countRequest (res, reported = false) {
    this.counters.requests++
    if (!reported) res.on('finish', this.countResponse)
  }

  /**
   * Count the status of a response that finished (a 'finish' listener would have).
   * @param {number} status
   */
  countFinished (status) {
    countStatus(this.counters, status)
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

function countStatus (counters, status) {
  if (status >= 500) counters.status5xx++
  else if (status >= 400) counters.status4xx++
}

module.exports = { RequestStats }
