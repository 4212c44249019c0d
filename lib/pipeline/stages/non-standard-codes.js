'use strict'

const { compileEntryMatch, entryMatches } = require('../../access/entry-match')
const { collapseAllSlashes } = require('../../paths/collapse-slashes')
const { compileAddressList } = require('../../access/address-list')

const REDIRECTS = new Set([301, 302, 307, 308])
// Codes whose entries a `users` list narrows to some clients (as in SVR.JS).
const SCOPED = new Set([403, 451])
const NOT_URL_SAFE = /[^\x21-\x7e]/gu
const LEADING_SLASHES = /^[/\\]{2,}/
const ABSOLUTE = /^(?:[a-z][a-z\d+.-]*:|[/\\]{2})/i

/**
 * `nonStandardCodes`: per-URL redirects and error codes. The first
 * matching entry wins; an entry matches when its `host` and `ip` (the local
 * address) fit, then its `regex` (tried on path + query, then on the
 * slash-collapsed path) or, without a regex, its `url` (equal to the
 * slash-collapsed path, encoded or decoded). A 403 or 451 entry with `users`
 * applies only to those client addresses. 401 entries belong to Basic auth
 * and are left alone here.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null} null without any non-401 entry
 */
function createNonStandardCodesStage (options, shared) {
  const rules = options.config.nonStandardCodes.map(compileRule).filter((rule) => rule.scode !== 401)
  if (rules.length === 0) return null
  const { respond } = shared
  return function applyNonStandardCodes (req, res, ctx) {
    const url = ctx.pathname + ctx.search
    const href = collapseAllSlashes(ctx.pathname)
    for (const rule of rules) {
      if (!entryMatches(rule.match, ctx, url, href)) continue
      if (rule.users !== null && !rule.users(ctx.clientAddress)) continue
      if (rule.redirect) respond.redirect(ctx, redirectTarget(rule, url, href, ctx), rule.scode)
      else respond.sendError(ctx, rule.scode)
      return true
    }
    return false
  }
}

function compileRule (entry, number) {
  return {
    scode: entry.scode,
    redirect: REDIRECTS.has(entry.scode),
    match: compileEntryMatch(entry, number),
    location: entry.location === undefined ? '' : encodeLocation(entry.location),
    absolute: entry.location !== undefined && ABSOLUTE.test(entry.location),
    users: SCOPED.has(entry.scode) ? compileUsers(entry.users) : null
  }
}

// An empty `users` list applies to nobody, not to everybody.
function compileUsers (users) {
  if (users === undefined) return null
  return compileAddressList(users) || matchesNobody
}

function matchesNobody () {
  return false
}

/**
 * With a regex, the location replaces the matched part of path + query
 * (`$1` refers to its groups), or of the path when path + query is left
 * unchanged; with a url, the request's query string is carried over.
 */
function redirectTarget (rule, url, href, ctx) {
  if (rule.match.regex !== null) {
    // replace() starts a sticky regex at lastIndex.
    rule.match.regex.lastIndex = 0
    let replaced = url.replace(rule.match.regex, rule.location)
    if (replaced === url) {
      rule.match.regex.lastIndex = 0
      replaced = href.replace(rule.match.regex, rule.location)
    }
    // "/$1" with a group that starts with "/" would make a protocol-relative
    // URL, sending the client to a host taken from the request path.
    return rule.absolute ? replaced : replaced.replace(LEADING_SLASHES, '/')
  }
  if (ctx.search === '') return rule.location
  return rule.location.includes('?') ? rule.location + '&' + ctx.search.slice(1) : rule.location + ctx.search
}

// A Location header may carry only visible ASCII; a configured location
// with spaces or non-ASCII characters gets them percent-encoded once here.
function encodeLocation (location) {
  return location.replace(NOT_URL_SAFE, encodeCharacter)
}

function encodeCharacter (ch) {
  try {
    return encodeURI(ch)
  } catch {
    // A lone surrogate has no UTF-8 form.
    return '%EF%BF%BD'
  }
}

module.exports = { createNonStandardCodesStage }
