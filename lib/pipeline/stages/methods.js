'use strict'

const { headForWrappers } = require('../request/tolerant-response')

// The built-in handlers (status page, static files, listings) only read.
const ALLOW = 'GET, HEAD, OPTIONS'
const ALLOW_HEADERS = Object.freeze({ Allow: ALLOW })

/**
 * Methods the built-in handlers serve: GET and HEAD pass on, OPTIONS is
 * answered 204 with Allow, anything else 405 with the same Allow. Mods and
 * serverSideScript.js run before this stage, so a POST they handle never
 * gets here; unlike SVR.JS 3.x, a POST nobody handles no longer returns the
 * file, which hid a form posted to the wrong URL.
 * @param {object} options runtime options
 * @param {{respond: object}} shared
 * @returns {(req, res, ctx) => boolean}
 */
function createMethodsStage (options, shared) {
  const { respond } = shared
  return function checkMethod (req, res, ctx) {
    const method = req.method
    if (method === 'GET' || method === 'HEAD') return false
    if (method === 'OPTIONS') {
      res.statusCode = 204
      res.setHeader('Allow', ALLOW)
      headForWrappers(res)
      res.end()
      return true
    }
    respond.sendError(ctx, 405, { headers: ALLOW_HEADERS })
    return true
  }
}

module.exports = { createMethodsStage }
