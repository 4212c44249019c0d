'use strict'

const { compileAddressList } = require('../access/address-list')

/**
 * `blacklist`: refuse listed clients with 403 before anything else looks at
 * the request, as SVR.JS does. The list is parsed once per worker; unlike
 * SVR.JS, svr never writes it back to config.json.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null} null when the list is empty
 */
function createBlocklistStage (options, shared) {
  const isBlocked = compileAddressList(options.config.blacklist)
  if (isBlocked === null) return null
  const { respond } = shared
  return function checkBlocklist (req, res, ctx) {
    if (!isBlocked(ctx.clientAddress)) return false
    respond.sendError(req, res, 403)
    return true
  }
}

module.exports = { createBlocklistStage }
