'use strict'

const { createVerifier } = require('./verify')
const { createThrottleClient } = require('./cluster-throttle')

/**
 * Judge Basic-auth logins for the 401 rules of one worker: the throttle
 * first (unless the rule has `disableBruteProtection`), then the password.
 * A browser sends the same credentials with every request of a page, often
 * several at once; requests from one client with the same credentials for
 * the same rule that arrive while the first is being judged share its
 * outcome, so they cost one slow hash and count as one attempt. Credentials
 * accepted moments ago are no new guess and are not counted at all.
 * @param {object[]} users the config's `users`
 * @param {boolean} throttled whether any rule uses the throttle
 * @param {object} runtime the worker's runtime, whose coordinator keeps the throttle
 * @returns {(rule: object, address: string, credentials: {name: string, password: string}|null) =>
 *   Promise<{wait: number, user: string|null}>} `wait`: seconds of lock
 *   (answer 429); else `user` is the accepted name, or null (answer 401)
 */
function createLoginJudge (users, throttled, runtime) {
  const verifier = createVerifier(users)
  const throttle = throttled ? createThrottleClient(runtime) : null
  const judging = new Map()

  return function judge (rule, address, credentials) {
    if (credentials === null) return judgeAnonymous(throttle, rule, address)
    const key = rule.id + '\n' + address + '\n' + verifier.keyOf(credentials.name, credentials.password)
    let outcome = judging.get(key)
    if (outcome === undefined) {
      outcome = judgeOnce(verifier, throttle, rule, address, credentials).finally(() => judging.delete(key))
      judging.set(key, outcome)
    }
    return outcome
  }
}

async function judgeAnonymous (throttle, rule, address) {
  // A locked client learns so before it sends credentials, as in SVR.JS.
  const wait = rule.throttled ? await throttle.check(address, null) : 0
  return { wait, user: null }
}

async function judgeOnce (verifier, throttle, rule, address, { name, password }) {
  const counted = rule.throttled && !verifier.knows(name, password, rule.userList)
  if (rule.throttled) {
    // An attempt is counted before its password is checked, so that a burst
    // of different guesses cannot all pass before the first failure is on
    // record; a success gives it back (lib/auth/throttle.js).
    const wait = await (counted ? throttle.attempt(address, name) : throttle.check(address, name))
    if (wait !== 0) return { wait, user: null }
  }
  const user = await verifier.verify(name, password, rule.userList)
  if (user !== null && rule.throttled) throttle.succeed(address, user, counted)
  return { wait: 0, user }
}

module.exports = { createLoginJudge }
