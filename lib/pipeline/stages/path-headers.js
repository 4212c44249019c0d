'use strict'

const { sendPathHeaders } = require('../request/custom-headers')

/**
 * The custom headers whose value names `{path}`, set where the URL is
 * final: after sanitize and rewrite, the only stages that change it. An
 * answer made before this point sets them itself, naming the URL as it is
 * then (the responder, the health check, `OPTIONS *`).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null} null when no header names `{path}`
 */
function createPathHeadersStage (options, shared) {
  if (!shared.sites.pathHeaders) return null
  return function setPathHeaders (req, res, ctx) {
    sendPathHeaders(req, res, ctx)
    return false
  }
}

module.exports = { createPathHeadersStage }
