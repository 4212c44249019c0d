'use strict'

const { compileAuthRules, findAuthRule } = require('../../auth/rules')
const { parseBasicCredentials } = require('../../auth/credentials')
const { createLoginJudge } = require('../../auth/login')

/**
 * HTTP Basic authentication for the 401 entries of `nonStandardCodes`.
 * The first matching 401 entry asks for the credentials of a
 * top-level `users` account (limited to its `userList`); a valid login sets
 * ctx.authUser and the request goes on, anything else gets 401 with the
 * challenge. Unless the entry has `disableBruteProtection`, a client locked
 * by the failed-login throttle gets 429 with Retry-After, even with the
 * right password.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null without any 401 entry
 */
function createAuthStage (options, shared) {
  const rules = compileAuthRules(options.config.nonStandardCodes)
  if (rules.length === 0) return null
  const judge = createLoginJudge(options.config.users, rules.some((rule) => rule.throttled), shared.runtime)
  const { respond } = shared
  return function authenticate (req, res, ctx) {
    const rule = findAuthRule(rules, ctx)
    if (rule === null) return false
    const credentials = parseBasicCredentials(req.headers.authorization)
    return judge(rule, ctx.clientAddress, credentials).then((outcome) => answer(respond, rule, req, res, ctx, outcome))
  }
}

function answer (respond, rule, req, res, ctx, { wait, user }) {
  if (wait !== 0) {
    respond.sendError(ctx, 429, { headers: { 'Retry-After': String(wait) } })
    return true
  }
  if (user === null) {
    respond.sendError(ctx, 401, { headers: rule.challenge })
    return true
  }
  ctx.authUser = user
  return false
}

module.exports = { createAuthStage }
