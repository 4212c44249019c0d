'use strict'

const { parseRegexString, parseMatchTester } = require('../util/regex')
const { isScoped } = require('../hosts/vhost')
const { collapseSlashes } = require('../paths/collapse-slashes')

/**
 * Compile `rewriteMap` once: every regex, host and ip matcher.
 * @param {object[]} rewriteMap validated rules
 * @returns {RewriteRule[]}
 */
function compileRewriteMap (rewriteMap) {
  return rewriteMap.map((rule, number) => new RewriteRule(rule, number))
}

/** @private */
class RewriteRule {
  constructor (rule, number) {
    this.number = number
    // With a host or ip: applies only to the sites it names (ctx.site.scopedRewrites).
    this.scoped = isScoped(rule)
    // Only asked whether it matches (ruleMatches, the rule index); the
    // replacements' regexes give the positions of their matches, and stay whole.
    this.test = parseMatchTester(rule.definingRegex)
    this.replacements = (rule.replacements || []).map((entry) => [parseRegexString(entry.regex), entry.replacement])
    this.append = rule.append || ''
    this.isNotFile = rule.isNotFile === true
    this.isNotDirectory = rule.isNotDirectory === true
    this.needsStat = this.isNotFile || this.isNotDirectory
    this.allowDoubleSlashes = rule.allowDoubleSlashes === true
  }
}

/**
 * Whether a rule applies to a request, apart from its file conditions.
 * @param {RewriteRule} rule
 * @param {string} url path and query the rule is tested on
 * @param {{site: import('../site').Site}} ctx
 * @returns {boolean}
 */
function ruleMatches (rule, url, ctx) {
  if (rule.scoped && !ctx.site.scopedRewrites.has(rule.number)) return false
  // search() ignores lastIndex, so a g or y flag cannot make it skip a match.
  return url.search(rule.test) !== -1
}

/**
 * The file conditions of a rule, given what the current path is.
 * @param {RewriteRule} rule
 * @param {import('node:fs').Stats|null} stats
 * @returns {boolean}
 */
function statAllows (rule, stats) {
  if (stats === null) return true
  if (rule.isNotFile && stats.isFile()) return false
  if (rule.isNotDirectory && stats.isDirectory()) return false
  return true
}

/**
 * Run a rule's replacements one after the other, then add `append`.
 * @param {RewriteRule} rule
 * @param {string} url
 * @returns {string}
 */
function applyRule (rule, url) {
  let result = url
  for (const [regex, replacement] of rule.replacements) {
    // A sticky regex without g starts replacing at lastIndex.
    regex.lastIndex = 0
    result = result.replace(regex, replacement)
  }
  return result + rule.append
}

module.exports = { compileRewriteMap, ruleMatches, statAllows, applyRule, collapseSlashes }
