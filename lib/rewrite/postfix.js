'use strict'

const { parseMatchTester } = require('../util/regex')

/**
 * `wwwrootPostfixesVHost` and `wwwrootPostfixPrefixesVHost`: serve a host
 * from a sub-directory of the webroot by inserting `/<postfix>` at the start
 * of the URL, or after the first matching prefix (e.g. `/cgi-bin`). The
 * entry is the first for the request's host and address (ctx.site.postfix).
 * @param {object} config validated configuration
 * @returns {((url: string, ctx) => string|null) | null} the URL with the
 *   postfix (null: no entry applies); null when no entries are configured
 */
function compilePostfixes (config) {
  if (config.wwwrootPostfixesVHost.length === 0) return null
  const entries = config.wwwrootPostfixesVHost.map((entry) => ({
    insert: '/' + entry.postfix,
    skip: entry.skipRegex === undefined ? null : parseMatchTester(entry.skipRegex)
  }))
  const prefixes = config.wwwrootPostfixPrefixesVHost.map(compilePrefix)

  return function addPostfix (url, ctx) {
    const entry = findEntry(entries, url, ctx)
    if (entry === null) return null
    const at = prefixLength(prefixes, url)
    return url.slice(0, at) + entry.insert + url.slice(at)
  }
}

// The site's entry; none when its skipRegex matches.
function findEntry (entries, url, ctx) {
  const number = ctx.site.postfix
  if (number === -1) return null
  const entry = entries[number]
  // search() ignores lastIndex, so a g or y flag cannot make it skip a match.
  if (entry.skip !== null && url.search(entry.skip) !== -1) return null
  return entry
}

// `/cgi-bin/` matches anything below it and keeps `/cgi-bin`; `/cgi-bin`
// matches only whole segments, so `/cgi-binary` stays out.
function compilePrefix (prefix) {
  let end = prefix.length
  while (end > 0 && prefix.charCodeAt(end - 1) === 47 /* / */) end--
  return { text: prefix, keep: end, wholeSegment: end === prefix.length }
}

function prefixLength (prefixes, url) {
  for (const prefix of prefixes) {
    if (!url.startsWith(prefix.text)) continue
    if (!prefix.wholeSegment) return prefix.keep
    const next = url.charCodeAt(prefix.text.length)
    if (Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */) return prefix.keep
  }
  return 0
}

module.exports = { compilePostfixes }
