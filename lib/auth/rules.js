'use strict'

const { parseRegexString } = require('../config/regex')
const { compileHostMatcher, compileLocalIpMatcher } = require('../util/vhost')

const DEFAULT_REALM = 'Restricted area'
const SLASH_RUNS = /\/{2,}/g
const QUOTED_SPECIALS = /["\\]/g
// Control characters cannot go into a header value.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/g // eslint-disable-line no-control-regex

/**
 * Compile the 401 entries of `nonStandardCodes` once per worker. They match
 * requests exactly as the other entries do (§2.6): `host` and `ip` (the
 * local address) must fit, then the `regex` is tried on path + query and on
 * the slash-collapsed path, or the `url` must equal the slash-collapsed
 * path, percent-encoded or decoded.
 * @param {object[]} entries the config's `nonStandardCodes`
 * @returns {object[]} one rule per 401 entry, in order
 */
function compileAuthRules (entries) {
  return entries.filter((entry) => entry.scode === 401).map(compileAuthRule)
}

function compileAuthRule (entry, id) {
  return {
    id,
    regex: entry.regex === undefined ? null : parseRegexString(entry.regex),
    url: entry.url === undefined ? null : collapseSlashes(entry.url),
    host: compileHostMatcher(entry.host),
    ip: compileLocalIpMatcher(entry.ip),
    userList: entry.userList === undefined ? null : new Set(entry.userList),
    throttled: !entry.disableBruteProtection,
    challenge: Object.freeze({ 'WWW-Authenticate': challengeFor(entry.realm) })
  }
}

/**
 * @param {string|undefined} realm
 * @returns {string} the Basic challenge (RFC 7617) with the realm as a
 *   quoted-string; non-ASCII goes out as UTF-8 bytes, which is what the
 *   charset parameter announces
 */
function challengeFor (realm) {
  const text = realm === undefined || realm === '' ? DEFAULT_REALM : realm
  const quoted = text.replace(CONTROL, '').replace(QUOTED_SPECIALS, '\\$&')
  return 'Basic realm="' + Buffer.from(quoted, 'utf8').toString('latin1') + '", charset="UTF-8"'
}

/**
 * @param {object[]} rules from compileAuthRules
 * @param {{pathname: string, search: string, decodedPath: string|null,
 *   hostname: string, localAddress: string}} ctx
 * @returns {object|null} the first rule that applies to the request
 */
function findAuthRule (rules, ctx) {
  const url = ctx.pathname + ctx.search
  const href = collapseSlashes(ctx.pathname)
  for (const rule of rules) {
    if (rule.host !== null && !rule.host(ctx.hostname)) continue
    if (rule.ip !== null && !rule.ip(ctx.localAddress)) continue
    if (matchesPath(rule, url, href, ctx.decodedPath)) return rule
  }
  return null
}

function matchesPath (rule, url, href, decodedPath) {
  if (rule.regex !== null) {
    // String#search starts at 0 whatever lastIndex a g or y regex holds.
    return url.search(rule.regex) !== -1 || href.search(rule.regex) !== -1
  }
  if (rule.url === href) return true
  return decodedPath !== null && rule.url === collapseSlashes(decodedPath)
}

function collapseSlashes (p) {
  return p.indexOf('//') === -1 ? p : p.replace(SLASH_RUNS, '/')
}

module.exports = { compileAuthRules, findAuthRule, challengeFor, DEFAULT_REALM }
