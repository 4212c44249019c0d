'use strict'

const { sendPathHeaders } = require('../request/custom-headers')

const ALLOW = 'GET, HEAD'
const BODY = { ok: 'ok\n', starting: 'starting\n', draining: 'draining\n' }

/**
 * The health path (`healthPath`) for load balancers: answered before the
 * access rules, so that a check never depends on the site's configuration,
 * with 200 when the worker takes traffic and 503 while it warms up or
 * drains. The target must match exactly: a balancer sends the same request
 * every time, and any other spelling (a query, an encoding) goes on to the
 * site.
 * @param {object} options runtime options
 * @param {{lifecycle: import('../lifecycle').Lifecycle}} shared
 * @returns {((req, res, ctx) => boolean) | null} null when `healthPath` is off
 */
function createHealthStage (options, shared) {
  const target = options.config.healthPath
  if (target === null) return null
  const { lifecycle } = shared
  return function answerHealth (req, res, ctx) {
    if (req.url !== target) return false
    const state = lifecycle.state()
    let body = BODY[state]
    sendPathHeaders(req, res, ctx)
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405
      res.setHeader('Allow', ALLOW)
      body = 'method not allowed\n'
    } else {
      res.statusCode = state === 'ok' ? 200 : 503
    }
    res.setHeader('Content-Type', 'text/plain; charset=utf-8')
    res.setHeader('Cache-Control', 'no-store')
    if (state === 'draining') res.shouldKeepAlive = false
    res.end(req.method === 'HEAD' ? undefined : body)
    return true
  }
}

module.exports = { createHealthStage }
