'use strict'

const { parseRegexString } = require('../config/regex')
const { compileHostMatcher, compileLocalIpMatcher } = require('../util/vhost')

const SLASH_RUNS = /\/{2,}/g

/**
 * How a `nonStandardCodes` entry selects requests, shared by the
 * status-code entries and the 401 (Basic auth) ones: `host` and `ip` (the
 * local address) must fit, then the `regex` is tried on path + query and on
 * the slash-collapsed path, or the `url` must equal the slash-collapsed
 * path, percent-encoded or decoded. Compiled once per worker.
 * @param {object} entry
 * @returns {{regex: RegExp|null, url: string|null, host: Function|null, ip: Function|null}}
 */
function compileEntryMatch (entry) {
  return {
    regex: entry.regex === undefined ? null : parseRegexString(entry.regex),
    url: entry.url === undefined ? null : collapseSlashes(entry.url),
    host: compileHostMatcher(entry.host),
    ip: compileLocalIpMatcher(entry.ip)
  }
}

/**
 * @param {object} match from compileEntryMatch
 * @param {{hostname: string, localAddress: string, decodedPath: string|null}} ctx
 * @param {string} url the request's path + query
 * @param {string} href its slash-collapsed path
 * @returns {boolean}
 */
function entryMatches (match, ctx, url, href) {
  if (match.host !== null && !match.host(ctx.hostname)) return false
  if (match.ip !== null && !match.ip(ctx.localAddress)) return false
  if (match.regex !== null) {
    // String#search starts at 0 whatever lastIndex a g or y regex holds.
    return url.search(match.regex) !== -1 || href.search(match.regex) !== -1
  }
  if (match.url === href) return true
  return ctx.decodedPath !== null && match.url === collapseSlashes(ctx.decodedPath)
}

function collapseSlashes (p) {
  return p.indexOf('//') === -1 ? p : p.replace(SLASH_RUNS, '/')
}

module.exports = { compileEntryMatch, entryMatches, collapseSlashes }
