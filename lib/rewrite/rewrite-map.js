'use strict'

const { parseRegexString } = require('../config/regex')
const { compileHostMatcher, compileLocalIpMatcher } = require('../util/vhost')

/**
 * Compile `rewriteMap` once: every regex, host and ip matcher.
 * @param {object[]} rewriteMap validated rules
 * @returns {RewriteRule[]}
 */
function compileRewriteMap (rewriteMap) {
  return rewriteMap.map((rule) => new RewriteRule(rule))
}

/** @private */
class RewriteRule {
  constructor (rule) {
    this.test = parseRegexString(rule.definingRegex)
    this.replacements = (rule.replacements || []).map((entry) => [parseRegexString(entry.regex), entry.replacement])
    this.append = rule.append || ''
    this.host = compileHostMatcher(rule.host)
    this.ip = compileLocalIpMatcher(rule.ip)
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
 * @param {{hostname: string, localAddress: string}} ctx
 * @returns {boolean}
 */
function ruleMatches (rule, url, ctx) {
  if (rule.host !== null && !rule.host(ctx.hostname)) return false
  if (rule.ip !== null && !rule.ip(ctx.localAddress)) return false
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

/**
 * The path with every run of slashes collapsed, for rules that do not ask
 * for double slashes while allowDoubleSlashes keeps them in the URL.
 * @param {string} url path and query
 * @returns {string}
 */
function collapseSlashes (url) {
  let query = url.indexOf('?')
  if (query === -1) query = url.length
  let out = ''
  let from = 0
  for (let i = 1; i < query; i++) {
    if (url.charCodeAt(i) === 47 && url.charCodeAt(i - 1) === 47) {
      out += url.slice(from, i)
      from = i + 1
    }
  }
  return from === 0 ? url : out + url.slice(from)
}

module.exports = { compileRewriteMap, ruleMatches, statAllows, applyRule, collapseSlashes }
