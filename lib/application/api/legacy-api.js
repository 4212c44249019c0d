'use strict'

const { createPostDataParser } = require('./post-data')
const { legacyUrlObject } = require('./url-object')
const { compileHostMatcher } = require('../../hosts/vhost')
const { LEGACY_NAMES } = require('./names')
const { headerObject } = require('../../pipeline/request/custom-headers')

/**
 * Everything per worker that the SVR.JS names need, worked out once; the
 * returned `argumentsFor` builds the per-request argument list.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {{argumentsFor: (req, res, ctx, elseCallback) => any[], configJSON: object, serverconsole: object, chrome: object}}
 */
function createLegacyApi (options, shared) {
  const { config } = options
  const chrome = shared.runtime.siteChromes.get(config.wwwroot)
  const configJSON = publicConfig(config)
  const serverconsole = createServerConsole(shared.log)
  const parsePostDataFor = createPostDataParser(options, shared)

  function argumentsFor (req, res, ctx, elseCallback) {
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
    return [
      req, res, serverconsole, responseEnd, ctx.pathname, extensionOf(ctx.pathname),
      legacyUrlObject(req, ctx), ctx.search, 'index.html', configJSON.users, config.page404,
      chrome.head, chrome.foot, '', elseCallback, configJSON, callServerError,
      () => headerObject(ctx.site.headers, req.url), ctx.origHref, redirect,
      parsePostDataFor(req, res, ctx), ctx.authUser
    ]
  }

  return { argumentsFor, configJSON, serverconsole, chrome }
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
  const slash = pathname.lastIndexOf('/')
  const dot = pathname.lastIndexOf('.')
  return dot > slash + 1 ? pathname.slice(dot + 1).toLowerCase() : ''
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

/**
 * The helpers SVR.JS declared inside the script's function.
 * @param {string} hostHeader
 * @param {string} href
 */
function legacyHelpers (hostHeader, href) {
  return {
    filterHeaders,
    checkHostname: (pattern) => checkHostname(pattern, hostHeader),
    checkHref: (candidate) => candidate === href
  }
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

module.exports = { LEGACY_NAMES, createLegacyApi, legacyHelpers, errorArguments, extensionOf, filterHeaders }
