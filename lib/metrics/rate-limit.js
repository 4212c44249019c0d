'use strict'

const { countLazily } = require('./lazy-counter')

const SPEC = {
  name: 'svr_rate_limited_total',
  help: 'Requests a rateLimits rule refused (429), delayed, or would have refused in a dry run.',
  labelNames: ['rule', 'action']
}

/**
 * Count what a rate-limit rule did to a request (refused, delayed, or
 * would have refused in a dry run).
 * @param {{metrics: {registry: object}|null}} runtime
 * @param {string} rule its name
 * @param {'refused'|'delayed'|'dry-run'} action
 */
function countRateLimited (runtime, rule, action) {
  countLazily(runtime, SPEC, { rule, action })
}

module.exports = { countRateLimited }
