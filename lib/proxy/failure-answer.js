'use strict'

const { performance } = require('node:perf_hooks')
const { allOut } = require('./select')

/**
 * Answer a request no upstream answered, through the usual error pages.
 * - every upstream the request may go to was at its connection limit, and
 *   the queue was full or the wait over: 503, Retry-After 1;
 * - every upstream of the route is out and none could be reached: 503,
 *   Retry-After the seconds until the primary's next check (1 without
 *   active checks: the next request tries them again);
 * - otherwise the last failure's status (502, 504, 413).
 * @param {import('./forward').ProxyExchange} exchange
 * @param {{status: number, full?: boolean, unreached?: boolean}|null} failure
 */
function answerFailure (exchange, failure) {
  const { res, route, env, ctx } = exchange
  ctx.upstreamTime = performance.now() - exchange.started
  if (failure === null || failure.full === true || (failure.unreached && allOut(route, Date.now()))) {
    const seconds = failure === null || failure.full === true ? 1 : nextCheckIn(route, env.upstreams)
    env.respond.sendError(ctx, 503, { headers: { 'Retry-After': String(seconds) } })
    return
  }
  // A body cut off at the limit leaves the rest of it unread.
  if (failure.status === 413) res.shouldKeepAlive = false
  env.respond.sendError(ctx, failure.status)
}

/**
 * @param {object} route
 * @param {import('./upstreams').ProxyUpstreams} upstreams
 * @returns {number} whole seconds until the primary's next verdict, at least 1
 */
function nextCheckIn (route, upstreams) {
  if (route.healthCheck === null) return 1
  const left = upstreams.verdictAt + route.healthCheck.interval - Date.now()
  return Math.max(1, Math.ceil(left / 1000))
}

module.exports = { answerFailure }
