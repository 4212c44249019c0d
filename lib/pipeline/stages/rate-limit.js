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
        refuse(ctx, rule, key, verdict)
        return true
      }
      if (!verdict.admitted) wouldRefuse(ctx, rule, key)
      if (admitted === null) admitted = []
      admitted.push(rule, key, state, verdict)
    }
    return admitted === null ? false : admit(res, ctx, admitted)
  }

  // Count the request in every rule that let it through; hold it back for
  // the longest wait of those that delay it.
  function admit (res, ctx, admitted) {
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
    countRateLimited(runtime, delaying.name, 'delayed')
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(res.destroyed || res.writableEnded), wait)
      // A client that leaves while it waits frees its place at once.
      res.once('close', () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  }

  function refuse (ctx, rule, key, verdict) {
    ctx.rateLimit = 'refused'
    countRateLimited(runtime, rule.name, 'refused')
    const seconds = Math.max(1, Math.ceil(verdict.wait / 1000))
    shared.respond.sendError(ctx, 429, {
      headers: {
        'Retry-After': String(seconds),
        'RateLimit-Policy': rule.policy,
        RateLimit: '"' + rule.name + '";r=0;t=' + seconds
      }
    })
  }

  function wouldRefuse (ctx, rule, key) {
    ctx.rateLimit = 'dry-run'
    countRateLimited(runtime, rule.name, 'dry-run')
    shared.log.info('request ' + ctx.requestId + ': rate limit ' + rule.name + ' would refuse ' + key + ' (dry run)')
  }
}

module.exports = { createRateLimitStage }
