'use strict'

const { sendPathHeaders } = require('../request/custom-headers')

// nginx answers a request line longer than its header buffer (8 KiB) with 414.
const MAX_REQUEST_LINE = 8192

const ALLOW_ALL = 'GET, HEAD, OPTIONS'

/**
 * Requests whose target or framing the rest of the pipeline cannot serve:
 * over-long targets, HTTP/1.1 without Host (RFC 9112 §3.2), `*` targets and
 * absolute-form (proxy) requests while no mod handles proxying.
 * @returns {(req, res, ctx) => boolean}
 */
function createRequestTargetStage (options, shared) {
  const { respond } = shared
  return function checkRequestTarget (req, res, ctx) {
    const url = req.url
    if (url.length > MAX_REQUEST_LINE) {
      respond.sendError(ctx, 414)
      return true
    }
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      respond.sendError(ctx, 400)
      return true
    }
    const first = url.charCodeAt(0)
    if (first === 47 /* / */) return false
    if (url === '*') {
      if (req.method === 'OPTIONS') {
        sendPathHeaders(req, res, ctx)
        res.statusCode = 204
        res.setHeader('Allow', ALLOW_ALL)
        res.end()
      } else {
        respond.sendError(ctx, 400)
      }
      return true
    }
    // Absolute-form and other targets: only a proxy mod could serve them.
    respond.sendError(ctx, 501)
    return true
  }
}

module.exports = { createRequestTargetStage, MAX_REQUEST_LINE }
