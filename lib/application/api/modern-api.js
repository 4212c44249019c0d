'use strict'

const { errorArguments } = require('./legacy-api')
const { legacyUrlObject } = require('./url-object')

/**
 * What SVR.JS 4.x `.js` mods expect: a log-facilities object, a config with
 * helper methods, and helpers on `req` and `res`.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @param {object} legacy from createLegacyApi (shares the console and site chrome)
 */
function createModernApi (options, shared, legacy) {
  const config = Object.freeze({
    ...legacy.configJSON,
    getCustomHeaders: () => ({ Server: shared.serverString, ...options.config.customHeaders }),
    generateServerString: () => shared.serverString
  })

  function decorate (req, res, ctx) {
    const { respond } = shared
    req.parsedURL = legacyUrlObject(req, ctx)
    req.originalParsedURL = legacyUrlObject(req, { pathname: ctx.origHref, search: ctx.search })
    req.isProxy = ctx.isProxy
    req.authUser = ctx.authUser
    res.error = (code, extName, stack, headers) => respond.sendError(ctx, code, errorArguments(extName, stack, headers))
    res.redirect = (destination, isTemporary, keepMethod) => {
      respond.redirect(ctx, destination, isTemporary ? (keepMethod ? 307 : 302) : (keepMethod ? 308 : 301))
    }
    res.head = legacy.chrome.head
    res.foot = legacy.chrome.foot
    res.responseEnd = (body) => res.end(legacy.chrome.head + body + legacy.chrome.foot)
  }

  return { logFacilities: legacy.serverconsole, config, decorate }
}

module.exports = { createModernApi }
