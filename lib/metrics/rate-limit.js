'use strict'

const kCounter = Symbol('svr.rateLimitCounter')

/**
 * Count what a rate-limit rule did to a request (refused, delayed, or
 * would have refused in a dry run), in the worker's registry while
 * `metricsPath` is set. The counter is made at its first use: a server
 * whose limits never act has no such series.
 * @param {{metrics: {registry: object}|null}} runtime
 * @param {string} rule its name
 * @param {'refused'|'delayed'|'dry-run'} action
 */
function countRateLimited (runtime, rule, action) {
  if (runtime.metrics === null) return
  const { registry } = runtime.metrics
  if (registry[kCounter] === undefined) {
    const { Counter } = require('prom-client')
    registry[kCounter] = new Counter({
      name: 'svr_rate_limited_total',
      help: 'Requests a rateLimits rule refused (429), delayed, or would have refused in a dry run.',
      labelNames: ['rule', 'action'],
      registers: [registry]
    })
  }
  registry[kCounter].inc({ rule, action })
}

module.exports = { countRateLimited }
