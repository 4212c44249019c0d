'use strict'

const { compileEntryMatch, entryMatches } = require('../access/entry-match')
const { collapseAllSlashes } = require('../paths/collapse-slashes')

const DEFAULT_REALM = 'Restricted area'
const QUOTED_SPECIALS = /["\\]/g
// Control characters cannot go into a header value.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/g // eslint-disable-line no-control-regex

/**
 * Compile the 401 entries of `nonStandardCodes` once per worker. They match
 * requests exactly as the other entries do (lib/access/entry-match.js).
 * @param {object[]} entries the config's `nonStandardCodes`
 * @returns {object[]} one rule per 401 entry, in order
 */
function compileAuthRules (entries) {
  const numbers = []
  entries.forEach((entry, number) => { if (entry.scode === 401) numbers.push(number) })
  return numbers.map((number, id) => compileAuthRule(entries[number], number, id))
}

function compileAuthRule (entry, number, id) {
  return {
    id,
    match: compileEntryMatch(entry, number),
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
 * @param {{pathname: string, search: string, decodedPath: string|null, site: import('../site').Site}} ctx
 * @returns {object|null} the first rule that applies to the request
 */
function findAuthRule (rules, ctx) {
  const url = ctx.pathname + ctx.search
  const href = collapseAllSlashes(ctx.pathname)
  for (const rule of rules) {
    if (entryMatches(rule.match, ctx, url, href)) return rule
  }
  return null
}

module.exports = { compileAuthRules, findAuthRule, challengeFor, DEFAULT_REALM }
