'use strict'

const { createPostDataParser } = require('./post-data')
const { legacyUrlObject } = require('./url-object')
const { compileHostMatcher } = require('../../hosts/vhost')
const { LEGACY_NAMES } = require('./names')
const { headerObject } = require('../../pipeline/request/custom-headers')

/**
 * Everything per worker that the SVR.JS names need, worked out once; the
 * returned `callWithArguments` calls a mod or the script with a request's.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {{callWithArguments: Function, configJSON: object, serverconsole: object, chrome: object}}
 */
function createLegacyApi (options, shared) {
  const { config } = options
  const chrome = shared.runtime.siteChromes.get(config.wwwroot)
  const configJSON = publicConfig(config)
  const serverconsole = createServerConsole(shared.log)
  const parsePostDataFor = createPostDataParser(options, shared)

  /**
   * Call `fn` with the SVR.JS arguments of a request: a mod's callback with
   * the 22 positional ones, the compiled script (fellThrough given) with the
   * helpers SVR.JS declared inside its function too. Listed in the call
   * rather than spread from an array, so that a request makes no argument
   * lists, only the functions bound to it.
   * @param {Function} fn
   * @param {object|undefined} self `this` of the call (the mod)
   * @param {Function|null} fellThrough the script's epilogue; null for a mod
   */
  function callWithArguments (fn, self, req, res, ctx, elseCallback, fellThrough) {
    const { respond } = shared
    function responseEnd (body) {
      res.end(chrome.head + body + chrome.foot)
    }
    function callServerError (code, extName, stack, headers) {
      const extra = errorArguments(extName, stack, headers)
      respond.sendError(ctx, code, extra)
    }
    function redirect (destination, isTemporary, keepMethod, headers) {
      const status = isTemporary ? (keepMethod ? 307 : 302) : (keepMethod ? 308 : 301)
      if (headers) setHeaders(res, headers)
      respond.redirect(ctx, destination, status)
    }
    function getCustomHeaders () {
      return headerObject(ctx.site.headers, req.url)
    }
    const href = ctx.pathname
    const uobject = legacyUrlObject(req, ctx)
    const parsePostData = parsePostDataFor(req, res, ctx)
    if (fellThrough === null) {
      return fn.call(self, req, res, serverconsole, responseEnd, href, extensionOf(href), uobject, ctx.search,
        'index.html', configJSON.users, config.page404, chrome.head, chrome.foot, '', elseCallback, configJSON,
        callServerError, getCustomHeaders, ctx.origHref, redirect, parsePostData, ctx.authUser)
    }
    const hostname = ctx.hostname
    return fn(req, res, serverconsole, responseEnd, href, extensionOf(href), uobject, ctx.search,
      'index.html', configJSON.users, config.page404, chrome.head, chrome.foot, '', elseCallback, configJSON,
      callServerError, getCustomHeaders, ctx.origHref, redirect, parsePostData, ctx.authUser,
      filterHeaders, (pattern) => checkHostname(pattern, hostname), (candidate) => candidate === href, false, fellThrough)
  }

  return { callWithArguments, configJSON, serverconsole, chrome }
}

/**
 * SVR.JS's `callServerError(code[, extName][, stack][, headers])` sniffs its
 * optional arguments by type.
 */
function errorArguments (extName, stack, headers) {
  const extra = {}
  for (const value of [extName, stack, headers]) {
    if (value === undefined || value === null) continue
    if (value instanceof Error) extra.error = value
    else if (typeof value === 'object') extra.headers = value
    else if (extra.extName === undefined && value === extName) extra.extName = String(value)
    else extra.error = { stack: String(value) }
  }
  return extra
}

function setHeaders (res, headers) {
  for (const name of Object.keys(headers)) {
    if (headers[name] !== undefined && headers[name] !== null) res.setHeader(name, headers[name])
  }
}

function extensionOf (pathname) {
  // One loop from the end instead of two String#lastIndexOf, which leave
  // optimised code for a runtime call each.
  for (let i = pathname.length - 1; i >= 0; i--) {
    const code = pathname.charCodeAt(i)
    if (code === 47 /* / */) return ''
    if (code === 46 /* . */) return i > 0 && pathname.charCodeAt(i - 1) !== 47 ? pathname.slice(i + 1).toLowerCase() : ''
  }
  return ''
}

/**
 * The configuration as application code sees it: password hashes and salts
 * are left out (SVR.JS handed them to every script and mod).
 * @param {object} config
 * @returns {object} frozen
 */
function publicConfig (config) {
  const users = config.users.map((user) => Object.freeze({ name: user.name }))
  return Object.freeze({ ...config, users: Object.freeze(users) })
}

function createServerConsole (log) {
  return Object.freeze({
    climessage: (msg) => log.info(msg),
    reqmessage: (msg) => log.info(msg),
    resmessage: (msg) => log.info(msg),
    errmessage: (msg) => log.error(msg),
    locerrmessage: (msg) => log.error(msg),
    locwarnmessage: (msg) => log.warn(msg),
    locmessage: (msg) => log.info(msg)
  })
}

function filterHeaders (headers) {
  const filtered = {}
  for (const name of Object.keys(headers)) {
    if (headers[name] !== undefined && headers[name] !== null) filtered[name] = headers[name]
  }
  return filtered
}

function checkHostname (pattern, hostname) {
  const matcher = compileHostMatcher(pattern)
  return matcher === null || matcher(hostname)
}

module.exports = { LEGACY_NAMES, createLegacyApi, errorArguments, extensionOf, filterHeaders }
