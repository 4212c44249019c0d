'use strict'

const { compileCustomHeaders, selectHeaderSet, setHeaders } = require('../custom-headers')
const { fixRawBytes } = require('../util/sanitize-path')

/**
 * `Server`, `customHeaders` and the first matching `customHeadersVHost`
 * entry, set first with res.setHeader so that every later answer carries
 * them: files, 206, 304, redirects and error pages alike. `{path}` names the
 * request URL; the stages that change the URL set those headers again.
 * @param {object} options runtime options
 * @param {{serverString: string}} shared
 * @returns {(req, res, ctx) => boolean}
 */
function createHeadersStage (options, shared) {
  const headers = compileCustomHeaders(options.config, shared.serverString)
  if (headers.vhosts.length === 0 && !headers.hasPathHeaders) {
    const set = headers.base
    return function setCustomHeaders (req, res, ctx) {
      setHeaders(res, set, '')
      return false
    }
  }
  return function setCustomHeaders (req, res, ctx) {
    // The raw target may hold latin-1 bytes; the sanitize stage makes the same fix.
    const url = headers.hasPathHeaders ? fixRawBytes(req.url) : ''
    setHeaders(res, selectHeaderSet(headers, ctx), url)
    return false
  }
}

module.exports = { createHeadersStage }
