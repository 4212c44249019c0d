'use strict'

const { parseMatchTester } = require('../util/regex')

/**
 * Compile the `cacheControl` rules once at boot.
 * @param {{regex: string, value: string}[]} rules config `cacheControl`
 * @returns {((urlPath: string) => string|null) | null} the value of the first
 *   rule whose regex matches the served path, or null; null when there are no rules
 */
function compileCacheControl (rules) {
  if (rules.length === 0) return null
  const compiled = rules.map((rule) => ({ regex: parseMatchTester(rule.regex), value: rule.value }))
  return function cacheControlFor (urlPath) {
    for (let i = 0; i < compiled.length; i++) {
      // search() always starts at 0, whatever lastIndex a g or y flag left behind.
      if (urlPath.search(compiled[i].regex) !== -1) return compiled[i].value
    }
    return null
  }
}

module.exports = { compileCacheControl }
