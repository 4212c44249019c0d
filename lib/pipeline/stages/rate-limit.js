'use strict'

const { compileRateRules } = require('../../traffic/rules')
const { RateLimiter } = require('../../traffic/limiter')
const { countRateLimited } = require('../../metrics/rate-limit')

/**
 * `rateLimits` (docs/traffic.md): every rule of the request's site whose
 * path and method match judges the request by its key; one that refuses it
 * answers 429, and the longest wait of those that delay it holds the
 * request back before the stages after this one. A request is counted by
 * every rule only once none refused it, as nginx does.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean|Promise<boolean>) | null} null without rules
 */
function createRateLimitStage (options, shared) {
  const { config } = options
  if (config.rateLimits.length === 0) return null
  const rules = compileRateRules(config)
  const { runtime } = shared
  if (runtime.rateLimiter !== null) runtime.rateLimiter.stop()
  const limiter = new RateLimiter(rules, runtime.coordinator)
  runtime.rateLimiter = limiter
  const env = { limiter, runtime, respond: shared.respond, log: shared.log }

  return function rateLimit (req, res, ctx) {
    const numbers = ctx.site.rateLimits
    if (numbers.length === 0) return false
    const now = Date.now()
    let admitted = null
    for (const number of numbers) {
      const rule = rules[number]
      if ((rule.methods !== null && !rule.methods.has(req.method)) || !rule.matchesPath(ctx.pathname)) continue
      const key = rule.keyOf(ctx)
      if (key === null) continue
      const state = limiter.state(rule, key)
      const verdict = limiter.judge(rule, state, now)
      if (!verdict.admitted && !rule.dryRun) {
        refuse(env, ctx, rule, verdict)
        return true
      }
      if (!verdict.admitted) wouldRefuse(env, ctx, rule, key)
      if (admitted === null) admitted = []
      admitted.push(rule, key, state, verdict)
    }
    return admitted === null ? false : admit(env, res, ctx, admitted)
  }
}

/**
 * Count the request in every rule that let it through; hold it back for
 * the longest wait of those that delay it.
 * @param {object} env the stage's limiter, runtime, respond and log
 * @param {import('node:http').ServerResponse} res
 * @param {object} ctx
 * @param {Array} admitted rule, key, state and verdict of each rule, in a row
 * @returns {boolean|Promise<boolean>}
 */
function admit (env, res, ctx, admitted) {
  const { limiter } = env
  let wait = 0
  let delaying = null
  for (let i = 0; i < admitted.length; i += 4) {
    const rule = admitted[i]
    const key = admitted[i + 1]
    const state = admitted[i + 2]
    const verdict = admitted[i + 3]
    limiter.admit(rule, key, state, verdict)
    if (rule.connections !== null) res.once('close', () => limiter.release(rule, key, state))
    if (verdict.wait > wait && !rule.dryRun) {
      wait = verdict.wait
      delaying = rule
    }
  }
  if (wait === 0) return false
  if (ctx.rateLimit === null) ctx.rateLimit = 'delayed'
  countRateLimited(env.runtime, delaying.name, 'delayed')
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(res.destroyed || res.writableEnded), wait)
    // A client that leaves while it waits frees its place at once.
    res.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

function refuse (env, ctx, rule, verdict) {
  ctx.rateLimit = 'refused'
  countRateLimited(env.runtime, rule.name, 'refused')
  const seconds = Math.max(1, Math.ceil(verdict.wait / 1000))
  env.respond.sendError(ctx, 429, {
    headers: {
      'Retry-After': String(seconds),
      'RateLimit-Policy': rule.policy,
      RateLimit: '"' + rule.name + '";r=0;t=' + seconds
    }
  })
}

function wouldRefuse (env, ctx, rule, key) {
  ctx.rateLimit = 'dry-run'
  countRateLimited(env.runtime, rule.name, 'dry-run')
  env.log.info('request ' + ctx.requestId + ': rate limit ' + rule.name + ' would refuse ' + key + ' (dry run)')
}

module.exports = { createRateLimitStage }
