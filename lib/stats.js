'use strict'

/**
 * Request counters of this process, for the status page. One object per
 * process (it survives a pipeline swap on reload); the primary adds up the
 * counters of every worker when the status page asks.
 */
const counters = {
  started: Date.now(),
  requests: 0,
  status4xx: 0,
  status5xx: 0,
  malformed: 0
}

function countResponse () {
  const status = this.statusCode
  if (status >= 500) counters.status5xx++
  else if (status >= 400) counters.status4xx++
}

/**
 * @param {import('node:http').ServerResponse} res
 */
function countRequest (res) {
  counters.requests++
  res.on('finish', countResponse)
}

function countMalformed () {
  counters.malformed++
  counters.status4xx++
}

/** @returns {object} a snapshot safe to send over IPC */
function snapshot () {
  const memory = process.memoryUsage()
  const cpu = process.cpuUsage()
  return {
    pid: process.pid,
    ...counters,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    cpuUser: cpu.user,
    cpuSystem: cpu.system
  }
}

module.exports = { countRequest, countMalformed, snapshot }
