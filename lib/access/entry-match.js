'use strict'

const { parseRegexString, forMatchTest } = require('../util/regex')
const { isScoped } = require('../hosts/vhost')
const { collapseAllSlashes } = require('../paths/collapse-slashes')

/**
 * How a `nonStandardCodes` entry selects requests, shared by the
 * status-code entries and the 401 (Basic auth) ones: its `host` and `ip`
 * (the local address) must fit the request's site, then the `regex` is
 * tried on path + query and on the slash-collapsed path, or the `url` must
 * equal the slash-collapsed path, percent-encoded or decoded. Compiled once
 * per worker.
 * @param {object} entry
 * @param {number} number the entry's position in `nonStandardCodes`
 * @returns {{regex: RegExp|null, tester: RegExp|null, url: string|null, number: number, scoped: boolean}}
 *   regex: as configured, for the location's replacement; tester: the same
 *   matches in linear time (lib/util/regex.js forMatchTest), to find them
 */
function compileEntryMatch (entry, number) {
  const regex = entry.regex === undefined ? null : parseRegexString(entry.regex)
  return {
    regex,
    tester: regex === null ? null : forMatchTest(regex),
    url: entry.url === undefined ? null : collapseAllSlashes(entry.url),
    number,
    // With a host or ip: applies only to the sites it names (ctx.site.scopedCodes).
    scoped: isScoped(entry)
  }
}

/**
 * @param {object} match from compileEntryMatch
 * @param {{site: import('../site').Site, decodedPath: string|null}} ctx
 * @param {string} url the request's path + query
 * @param {string} href its slash-collapsed path
 * @returns {boolean}
 */
function entryMatches (match, ctx, url, href) {
  if (match.scoped && !ctx.site.scopedCodes.has(match.number)) return false
  if (match.tester !== null) {
    // String#search starts at 0 whatever lastIndex a g or y regex holds.
    return url.search(match.tester) !== -1 || href.search(match.tester) !== -1
  }
  if (match.url === href) return true
  return ctx.decodedPath !== null && match.url === collapseAllSlashes(ctx.decodedPath)
}

module.exports = { compileEntryMatch, entryMatches }
