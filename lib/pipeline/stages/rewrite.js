'use strict'

const { statOnce } = require('../../file-store/request-stats')
const { toFsPath } = require('../../paths/fs-path')
const { compilePostfixes } = require('../../rewrite/postfix')
const { compileRewriteMap, ruleMatches, statAllows, applyRule, collapseSlashes } = require('../../rewrite/rewrite-map')
const { compileWwwRedirect } = require('../../rewrite/www-redirect')
const { RuleIndex } = require('../../rewrite/rule-index')
const { sanitizePath, classifyRewrite } = require('../../paths/sanitize-path')
const { fixRawBytes, decodePath } = require('../../paths/percent')

/**
 * URL changes decided by configuration, in SVR.JS order: `wwwredirect`, then web-root postfixes, then the
 * first matching `rewriteMap` rule (no chaining), looked for among the
 * rules whose literal prefix the URL has (lib/rewrite/rule-index.js). A new URL is sanitised
 * again: one that climbs out with `..` is refused with 403, a malformed one
 * with 400. ctx.origHref keeps the path the client asked for.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null when
 *   none of these features is configured
 */
function createRewriteStage (options, shared) {
  const { config } = options
  const wwwLocation = compileWwwRedirect(config)
  const addPostfix = compilePostfixes(config)
  const rules = compileRewriteMap(config.rewriteMap)
  if (wwwLocation === null && addPostfix === null && rules.length === 0) return null
  const state = {
    root: config.wwwroot,
    allowDoubleSlashes: config.allowDoubleSlashes,
    postfixDoubleSlashes: config.allowPostfixDoubleSlashes,
    respond: shared.respond,
    rules,
    index: new RuleIndex(rules.map((rule) => rule.test), rules.map((rule) => config.allowDoubleSlashes && !rule.allowDoubleSlashes))
  }

  return function rewrite (req, res, ctx) {
    if (wwwLocation !== null) {
      const location = wwwLocation(req, ctx)
      if (location !== null) {
        state.respond.redirect(ctx, location, 301)
        return true
      }
    }
    if (addPostfix !== null) {
      const url = addPostfix(req.url, ctx)
      if (url !== null && commitUrl(state, req, res, ctx, url, state.postfixDoubleSlashes)) return true
    }
    if (rules.length === 0) return false
    const url = req.url
    let collapsed = null
    const collapsedUrl = () => {
      if (collapsed === null) collapsed = collapseSlashes(url)
      return collapsed
    }
    return runRules(state, req, res, ctx, state.index.candidates(url, collapsedUrl), 0)
  }
}

/**
 * Apply the first of the candidate rules that matches, from position
 * `start` of the list on; stat the current path only when a matching rule
 * has a file condition.
 * @param {readonly number[]} candidates rule numbers, ascending
 * @returns {boolean | Promise<boolean>}
 */
function runRules (state, req, res, ctx, candidates, start) {
  const { rules } = state
  const url = req.url
  let collapsed = null
  for (let i = start; i < candidates.length; i++) {
    const rule = rules[candidates[i]]
    let input = url
    if (state.allowDoubleSlashes && !rule.allowDoubleSlashes) {
      if (collapsed === null) collapsed = collapseSlashes(url)
      input = collapsed
    }
    if (!ruleMatches(rule, input, ctx)) continue
    if (rule.needsStat) {
      if (ctx.stat === undefined || ctx.statPath !== ctx.fsPath) return statThenRun(state, req, res, ctx, candidates, i, input)
      if (!statAllows(rule, ctx.stat)) continue
    }
    return commitUrl(state, req, res, ctx, applyRule(rule, input), state.allowDoubleSlashes)
  }
  return false
}

async function statThenRun (state, req, res, ctx, candidates, position, input) {
  const rule = state.rules[candidates[position]]
  if (!statAllows(rule, await statOnce(ctx))) return runRules(state, req, res, ctx, candidates, position + 1)
  return commitUrl(state, req, res, ctx, applyRule(rule, input), state.allowDoubleSlashes)
}

/**
 * Make a rewritten URL the request's URL, or refuse it.
 * @returns {boolean} true when the request was answered (400 or 403)
 */
function commitUrl (state, req, res, ctx, url, allowDoubleSlashes) {
  const fixed = fixRawBytes(url)
  const query = fixed.indexOf('?')
  let path = query === -1 ? fixed : fixed.slice(0, query)
  const search = query === -1 ? '' : fixed.slice(query)
  // A result without the leading slash (including '' and '*') is a path all the same.
  if (path.charCodeAt(0) !== 47 /* / */) path = '/' + path
  const verdict = classifyRewrite(path, allowDoubleSlashes)
  const clean = verdict === 'escapes'
    ? null
    : verdict === 'clean' ? path : sanitizePath(path, allowDoubleSlashes)
  const decoded = clean === null ? null : decodePath(clean)
  if (decoded === null) {
    // SVR.JS: "Content blocked" for a rewrite that climbs with `..`.
    const status = verdict === 'escapes' && sanitizePath(path, allowDoubleSlashes) !== null ? 403 : 400
    ctx.shared.log.warn('rewritten URL refused (' + status + '): ' + ctx.originalUrl + ' -> ' + fixed)
    state.respond.sendError(ctx, status)
    return true
  }
  ctx.pathname = clean
  ctx.search = search
  ctx.decodedPath = decoded
  ctx.fsPath = toFsPath(state.root, decoded)
  req.url = clean + search
  return false
}

module.exports = { createRewriteStage }
