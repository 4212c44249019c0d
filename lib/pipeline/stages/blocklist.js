'use strict'

const { compileAddressList } = require('../../access/address-list')

/**
 * `blacklist`, and the addresses blocked from the console since: refuse
 * listed clients with 403 before anything else looks at the request, as
 * SVR.JS does. The list is parsed once per worker; unlike SVR.JS, svr never
 * writes it back to config.json (console blocks live in `stateDirectory`).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {(req, res, ctx) => boolean}
 */
function createBlocklistStage (options, shared) {
  // The console may block addresses at any time, so the stage stays in
  // even when the configured list is empty.
  const isRuntimeBlocked = shared.runtime.blocklist.has
  const isListed = compileAddressList(options.config.blacklist) || isRuntimeBlocked
  const isBlocked = isListed === isRuntimeBlocked
    ? isRuntimeBlocked
    : (address) => isListed(address) || isRuntimeBlocked(address)
  const { respond } = shared
  return function checkBlocklist (req, res, ctx) {
    if (!isBlocked(ctx.clientAddress)) return false
    respond.sendError(ctx, 403)
    return true
  }
}

module.exports = { createBlocklistStage }
