'use strict'

const { compileAddressList } = require('../../access/address-list')
const { collectMetrics } = require('../../metrics/query')
const { headForWrappers } = require('../request/tolerant-response')

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * The Prometheus endpoint at `metricsPath`: the metrics of every worker,
 * gathered through the primary. Only `metricsAllow` (and Unix-socket
 * clients) may read it; to anyone else it does not exist, so the request
 * goes on (and ends in a 404) instead of revealing a 403.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null when `metricsPath` is null
 */
function createMetricsStage (options, shared) {
  const { metricsPath, metricsAllow } = options.config
  if (metricsPath === null) return null
  const isAllowed = createMetricsAllowCheck(metricsAllow)
  const { respond, log } = shared
  return function serveMetrics (req, res, ctx) {
    if (ctx.pathname !== metricsPath || !isAllowed(ctx.clientAddress)) return false
    return collectMetrics(shared.runtime).then((text) => {
      sendMetrics(req, res, text)
      return true
    }, (err) => {
      // A partial scrape would look like counter resets; better none.
      log.warn('metrics unavailable: ' + err.message)
      respond.sendError(ctx, 503, { headers: { 'Retry-After': '1' } })
      return true
    })
  }
}

/**
 * @param {string[]} metricsAllow addresses, CIDR ranges, "localhost"
 * @returns {(address: string) => boolean}
 */
function createMetricsAllowCheck (metricsAllow) {
  const listed = compileAddressList(metricsAllow)
  return function isMetricsClient (address) {
    // A Unix-socket peer (''): the socket file's permissions already decide.
    return address === '' || (listed !== null && listed(address))
  }
}

function sendMetrics (req, res, text) {
  if (res.headersSent || res.destroyed) return
  res.statusCode = 200
  res.setHeader('Content-Type', CONTENT_TYPE)
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.setHeader('Cache-Control', 'no-store')
  res.setHeader('X-Content-Type-Options', 'nosniff')
  headForWrappers(res)
  res.end(req.method === 'HEAD' ? undefined : text)
}

module.exports = { createMetricsStage, createMetricsAllowCheck }
