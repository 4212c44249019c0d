'use strict'

const { setFixedHeaders } = require('../request/custom-headers')

/**
 * `Server`, `customHeaders` and the first matching `customHeadersVHost`
 * entry (the request's site, lib/pipeline/site.js), set first with res.setHeader so
 * that every later answer carries them: files, 206, 304, redirects and
 * error pages alike. The headers whose value names `{path}` wait until the
 * URL is final or the request is answered (sendPathHeaders).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {(req, res, ctx) => boolean}
 */
function createHeadersStage (options, shared) {
  return function setCustomHeaders (req, res, ctx) {
    setFixedHeaders(res, ctx.site.headers)
    return false
  }
}

module.exports = { createHeadersStage }
