'use strict'

const { segmentPrefix } = require('../../paths/segment-prefix')
const { compileCacheSettings, entryState, baseKey } = require('../../cache/policy')
const { serveEntry, invalidateAfter } = require('../../cache/answer')
const { AnswerCapture } = require('../../cache/answer-capture')
const { countCacheResult } = require('../../metrics/cache')

/**
 * `cache` rules (docs/traffic.md): the GET answers of mods and
 * serverSideScript.js under a rule's path go through the response cache
 * that proxy routes use. A fresh entry answers without running them; a
 * missing or stale one is made by one request for the whole server, which
 * runs them while its answer is kept (lib/cache/answer-capture.js), the
 * others waiting for it. A stale entry within stale-while-revalidate
 * answers the others at once; within stale-if-error it answers instead of
 * a 5xx. A HEAD or a range that finds no fresh entry runs them as usual.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean|Promise<boolean>) | null} null without rules or application code
 */
function createAppCacheStage (options, shared) {
  const { config } = options
  if (config.cache.length === 0 || shared.links.length === 0) return null
  const rules = config.cache.map((rule) => ({ matchesPath: segmentPrefix(rule.path), settings: compileCacheSettings(rule) }))
  const env = {
    cache: shared.responseCache,
    settings: config.responseCache,
    respond: shared.respond,
    log: shared.log,
    countCache: (result) => countCacheResult(shared.runtime, result)
  }

  function appCache (req, res, ctx) {
    const rule = matchingRule(rules, ctx)
    if (rule === null) return false
    if (req.method === 'GET' || req.method === 'HEAD') return throughCache(req, res, ctx, rule, env)
    invalidateAfter(req, res, env.cache, baseKey(ctx.hostname, ctx.pathname + ctx.search))
    return false
  }
  // A capture wraps Node's response, which mods then wrap in turn.
  appCache.needsNodeObjects = true
  return appCache
}

/**
 * @returns {{matchesPath: Function, settings: object}|null} the first rule of the request's site whose path matches
 */
function matchingRule (rules, ctx) {
  for (const number of ctx.site.cacheRules) {
    const rule = rules[number]
    if (rule.matchesPath(ctx.pathname)) return rule
  }
  return null
}

/**
 * @returns {Promise<boolean>} true when answered from the cache; false:
 *   the application runs (its answer captured when this request fills)
 */
async function throughCache (req, res, ctx, rule, env) {
  const base = baseKey(ctx.hostname, ctx.pathname + ctx.search)
  const found = await env.cache.lookup(base, req.headers)
  const state = found.entry === null ? 'missing' : entryState(found.entry.meta, Date.now())
  if (state === 'fresh') return served(ctx, env, found, 'hit', 'hit')
  if (req.method !== 'GET' || req.headers.range !== undefined) {
    res.setHeader('Cache-Status', 'svr; fwd=request; detail=' + (req.method === 'GET' ? 'range' : 'head'))
    return false
  }
  // Within stale-while-revalidate, one request runs the application
  // again; every other is answered from the stale entry meanwhile.
  if (state === 'stale-while-revalidate') {
    if (!(await env.cache.tryFill(found.key))) return served(ctx, env, found, 'stale', 'hit; detail=stale')
    capture(ctx, env, rule, { base, key: found.key, filling: true, stale: found.entry, previous: found.entry })
    return false
  }
  return fillOrWait(req, res, ctx, rule, env, base, found)
}

// Missing or past its stale-while-revalidate window: this request makes
// the entry for the whole server, or waits for the one that does.
async function fillOrWait (req, res, ctx, rule, env, base, found) {
  const { cache } = env
  const verdict = await cache.fill(found.key, found.at)
  if (verdict === 'filled') {
    const filled = await cache.lookup(base, req.headers)
    if (filled.entry !== null && entryState(filled.entry.meta, Date.now()) === 'fresh') return served(ctx, env, filled, 'hit', 'hit')
    found = filled
  }
  if (res.destroyed) {
    if (verdict === 'fill') cache.unfilled(found.key)
    return true
  }
  const stale = found.entry !== null && entryState(found.entry.meta, Date.now()) !== 'expired' ? found.entry : null
  if (verdict === 'fill' || stale !== null) {
    capture(ctx, env, rule, { base, key: found.key, filling: verdict === 'fill', stale, previous: found.entry })
  }
  return false
}

function capture (ctx, env, rule, state) {
  new AnswerCapture(ctx, env, rule.settings, state).attach(ctx.res)
}

function served (ctx, env, found, result, how) {
  serveEntry(ctx, env, found.key, found.entry, result, how)
  return true
}

module.exports = { createAppCacheStage }
