'use strict'

const { compileAuthRules, findAuthRule } = require('../auth/rules')
const { parseBasicCredentials } = require('../auth/credentials')
const { createVerifier } = require('../auth/verify')
const { createThrottleClient } = require('../auth/cluster-throttle')

/**
 * HTTP Basic authentication for the 401 entries of `nonStandardCodes`
 * (§2.6). The first matching 401 entry asks for the credentials of a
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
  const guard = {
    verifier: createVerifier(options.config.users),
    throttle: rules.some((rule) => rule.throttled) ? createThrottleClient(shared.log) : null,
    respond: shared.respond
  }
  return function authenticate (req, res, ctx) {
    const rule = findAuthRule(rules, ctx)
    if (rule === null) return false
    return checkCredentials(guard, rule, req, res, ctx)
  }
}

async function checkCredentials (guard, rule, req, res, ctx) {
  const credentials = parseBasicCredentials(req.headers.authorization)
  if (rule.throttled) {
    const wait = await admit(guard.throttle, ctx.clientAddress, credentials)
    if (wait !== 0) return tooManyFailures(guard, req, res, wait)
  }
  if (credentials === null) return challenge(guard, rule, req, res)
  const user = await guard.verifier.verify(credentials.name, credentials.password, rule.userList)
  if (user === null) return challenge(guard, rule, req, res)
  if (rule.throttled) guard.throttle.succeed(ctx.clientAddress, user)
  ctx.authUser = user
  return false
}

// A login attempt is counted before its password is checked and given back
// on success (lib/auth/throttle.js); a request without credentials only
// learns whether its client is locked.
function admit (throttle, address, credentials) {
  return credentials === null ? throttle.check(address, null) : throttle.attempt(address, credentials.name)
}

function challenge (guard, rule, req, res) {
  guard.respond.sendError(req, res, 401, { headers: rule.challenge })
  return true
}

function tooManyFailures (guard, req, res, seconds) {
  guard.respond.sendError(req, res, 429, { headers: { 'Retry-After': String(seconds) } })
  return true
}

module.exports = { createAuthStage }
