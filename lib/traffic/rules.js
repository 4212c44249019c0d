'use strict'

const { segmentPrefix } = require('../paths/segment-prefix')
const { compileAddressList } = require('../access/address-list')

const PERIOD_MS = { second: 1000, minute: 60000, hour: 3600000 }
const PERIOD_SECONDS = { second: 1, minute: 60, hour: 3600 }

/**
 * A rule of `rateLimits`, compiled once per pipeline.
 * @typedef {object} RateLimitRule
 * @property {number} number its index in `rateLimits`
 * @property {string} name for the RateLimit fields, metrics and logs
 * @property {string} id what the primary keeps its buckets under: the same
 *   rule in every worker, another one when a reload changes its rate
 * @property {(pathname: string) => boolean} matchesPath
 * @property {Set<string>|null} methods null: all
 * @property {(ctx: object) => string|null} keyOf null: the rule does not apply
 * @property {{interval: number, burst: number, delay: number}|null} bucket null without `rate`
 * @property {number|null} connections
 * @property {string} policy the RateLimit-Policy item
 */

/**
 * @param {object} config
 * @returns {RateLimitRule[]}
 */
function compileRateRules (config) {
  return config.rateLimits.map((entry, number) => {
    const name = entry.name ?? 'limit' + number
    const bucket = entry.rate === null
      ? null
      : { interval: PERIOD_MS[entry.per] / entry.rate, burst: entry.burst, delay: entry.delay ?? Infinity }
    return {
      number,
      name,
      id: number + ' ' + JSON.stringify([entry.key, entry.header, bucket && bucket.interval, entry.burst, entry.connections, entry.maxKeys]),
      matchesPath: segmentPrefix(entry.path),
      methods: entry.methods.length === 0 ? null : new Set(entry.methods),
      keyOf: keyFunction(entry, compileAddressList(entry.allow) ?? never),
      bucket,
      connections: entry.connections,
      dryRun: entry.dryRun,
      maxKeys: entry.maxKeys,
      // draft-ietf-httpapi-ratelimit-headers: the quota q in a window of w seconds.
      policy: '"' + name + '";q=' + formatQuota(entry) + ';w=' + PERIOD_SECONDS[entry.per]
    }
  })
}

function never () {
  return false
}

function formatQuota (entry) {
  if (entry.rate === null) return String(entry.connections)
  return String(Math.max(1, Math.floor(entry.rate)))
}

/**
 * How a rule finds the key of a request; null when it does not apply to
 * it (an allowed address, a request without a Basic-auth user for "user").
 * @param {object} entry
 * @param {(address: string) => boolean} allowed
 * @returns {(ctx: object) => string|null}
 */
function keyFunction (entry, allowed) {
  const byAddress = (ctx) => allowed(ctx.clientAddress) ? null : ctx.clientAddress
  if (entry.key === 'user') return (ctx) => allowed(ctx.clientAddress) || typeof ctx.authUser !== 'string' ? null : 'user ' + ctx.authUser
  if (entry.key === 'header') {
    const name = entry.header.toLowerCase()
    return (ctx) => {
      if (allowed(ctx.clientAddress)) return null
      const value = ctx.req.headers[name]
      return typeof value === 'string' && value !== '' ? 'header ' + value : ctx.clientAddress
    }
  }
  return byAddress
}

/**
 * Checks the schema cannot express.
 * @param {object} data the configuration as validated
 * @returns {string[]}
 */
function rateLimitProblems (data) {
  if (!Array.isArray(data.rateLimits)) return []
  const problems = []
  data.rateLimits.forEach((entry, number) => {
    if (entry === null || typeof entry !== 'object') return
    const at = '/rateLimits/' + number
    if (entry.key === 'header' && typeof entry.header !== 'string') problems.push(at + '/header: is needed with key "header"')
    if ((entry.rate ?? null) === null && (entry.connections ?? null) === null) problems.push(at + ': sets neither rate nor connections, so it limits nothing')
  })
  return problems
}

module.exports = { compileRateRules, rateLimitProblems }
