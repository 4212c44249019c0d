'use strict'

const { createPostDataParser } = require('./post-data')
const { legacyUrlObject } = require('./url-object')
const { compileHostMatcher } = require('../../hosts/vhost')
const { LEGACY_NAMES } = require('./names')
const { headerObject } = require('../../pipeline/request/custom-headers')

/**
 * Everything per worker that the SVR.JS names need, worked out once; the
 * returned `callMod` and `scriptCaller` call a mod or the script with a
 * request's.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {{callMod: Function, scriptCaller: Function, configJSON: object, serverconsole: object, chrome: object}}
 */
function createLegacyApi (options, shared) {
  const { config } = options
  const chrome = shared.runtime.siteChromes.get(config.wwwroot)
  const configJSON = publicConfig(config)
  const serverconsole = createServerConsole(shared.log)
  const parsePostDataFor = createPostDataParser(options, shared)

  /**
   * Call a mod's callback with the 22 positional SVR.JS arguments of a
   * request, listed in the call rather than spread from an array, so that a
   * request makes no argument lists, only the functions bound to it.
   * @param {{callback: Function}} mod `this` of the call
   */
  function callMod (mod, req, res, ctx, elseCallback) {
    const href = ctx.pathname
    return mod.callback(req, res, serverconsole, responseEndFor(res, chrome), href, extensionOf(href),
      legacyUrlObject(req, ctx), ctx.search, 'index.html', configJSON.users, config.page404, chrome.head,
      chrome.foot, '', elseCallback, configJSON, callServerErrorFor(ctx, shared), getCustomHeadersFor(req, ctx),
      ctx.origHref, redirectFor(res, ctx, shared), parsePostDataFor(req, res, ctx), ctx.authUser)
  }

  /**
   * The call of a compiled serverSideScript.js (lib/application/compile.js)
   * with a request's SVR.JS names and the helpers SVR.JS declared inside
   * its function. A value that must be made for the request (a bound
   * function, the URL object, the extension) is made only when `uses`, the
   * names the script's text can refer to, holds its name: a script sees
   * every value it names, and one that names few makes few per request.
   * @param {Function} run
   * @param {Set<string>} uses
   * @returns {(req, res, ctx, elseCallback, fellThrough: Function) => unknown}
   */
  function scriptCaller (run, uses) {
    const wantsResponseEnd = uses.has('responseEnd')
    const wantsExt = uses.has('ext')
    const wantsUobject = uses.has('uobject')
    const wantsCallServerError = uses.has('callServerError')
    const wantsGetCustomHeaders = uses.has('getCustomHeaders')
    const wantsRedirect = uses.has('redirect')
    const wantsParsePostData = uses.has('parsePostData')
    const wantsCheckHostname = uses.has('checkHostname')
    const wantsCheckHref = uses.has('checkHref')
    return function callScript (req, res, ctx, elseCallback, fellThrough) {
      const href = ctx.pathname
      return run(req, res, serverconsole,
        wantsResponseEnd ? responseEndFor(res, chrome) : undefined,
        href,
        wantsExt ? extensionOf(href) : undefined,
        wantsUobject ? legacyUrlObject(req, ctx) : undefined,
        ctx.search, 'index.html', configJSON.users, config.page404, chrome.head, chrome.foot, '', elseCallback,
        configJSON,
        wantsCallServerError ? callServerErrorFor(ctx, shared) : undefined,
        wantsGetCustomHeaders ? getCustomHeadersFor(req, ctx) : undefined,
        ctx.origHref,
        wantsRedirect ? redirectFor(res, ctx, shared) : undefined,
        wantsParsePostData ? parsePostDataFor(req, res, ctx) : undefined,
        ctx.authUser,
        filterHeaders,
        wantsCheckHostname ? checkHostnameFor(ctx.hostname) : undefined,
        wantsCheckHref ? checkHrefFor(href) : undefined,
        false, fellThrough)
    }
  }

  return { callMod, scriptCaller, configJSON, serverconsole, chrome }
}

// The functions bound to a request that SVR.JS hands out, made per request.
function responseEndFor (res, chrome) {
  return function responseEnd (body) {
    res.end(chrome.head + body + chrome.foot)
  }
}

function callServerErrorFor (ctx, shared) {
  return function callServerError (code, extName, stack, headers) {
    shared.respond.sendError(ctx, code, errorArguments(extName, stack, headers))
  }
}

function redirectFor (res, ctx, shared) {
  return function redirect (destination, isTemporary, keepMethod, headers) {
    const status = isTemporary ? (keepMethod ? 307 : 302) : (keepMethod ? 308 : 301)
    if (headers) setHeaders(res, headers)
    shared.respond.redirect(ctx, destination, status)
  }
}

function getCustomHeadersFor (req, ctx) {
  return function getCustomHeaders () {
    return headerObject(ctx.site.headers, req.url)
  }
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

// SVR.JS's `checkHostname(pattern)` and `checkHref(candidate)`, bound to a request.
function checkHostnameFor (hostname) {
  return function checkHostname (pattern) {
    const matcher = compileHostMatcher(pattern)
    return matcher === null || matcher(hostname)
  }
}

function checkHrefFor (href) {
  return function checkHref (candidate) {
    return candidate === href
  }
}

module.exports = { LEGACY_NAMES, createLegacyApi, errorArguments, extensionOf, filterHeaders }
