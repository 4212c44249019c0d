'use strict'

const { LoginThrottle } = require('./throttle')

// A worker waits this long for the coordinator's verdict. The coordinator
// answers from memory, so only one that is gone or wedged misses it; the
// login is then judged without the throttle rather than hanging.
const QUERY_TIMEOUT_MS = 1000

/**
 * The failed-login throttle as a worker sees it: queries to the
 * coordinator, which keeps one LoginThrottle for all workers (`auth-check`
 * and `auth-attempt` answered with the seconds locked, `auth-success`
 * without answer).
 * @param {{coordinator: import('../ipc').Peer}} runtime this worker's runtime
 * @returns {{check: (address: string, user: string|null) => Promise<number>,
 *   attempt: (address: string, user: string) => Promise<number>,
 *   succeed: (address: string, user: string, counted: boolean) => void}} check and attempt
 *   resolve to the seconds the key is locked for (0: go ahead)
 */
function createThrottleClient (runtime) {
  const { coordinator } = runtime
  function query (act, address, user) {
    return coordinator.request(act, { address, user }, { timeout: QUERY_TIMEOUT_MS }).then(seconds, () => 0)
  }
  return {
    check: (address, user) => query('auth-check', address, user),
    attempt: (address, user) => query('auth-attempt', address, user),
    succeed (address, user, counted) {
      coordinator.notify('auth-success', { address, user, counted })
    }
  }
}

function seconds (retryAfter) {
  return Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : 0
}

/**
 * Coordinator services: one throttle for every worker, a LoginThrottle in
 * the primary's memory, or with a `store` the fleet's (lib/auth/fleet-throttle.js,
 * which answers with promises). It lives as long as the coordinator, so
 * counters and locks survive reloads and worker restarts.
 * @param {{log: {warn: Function}, throttle?: object}} coordinator gets `throttle`
 * @param {object} [options] LoginThrottle options (tests)
 * @returns {Object<string, (msg: object) => number|Promise<number>|void>}
 */
function throttleServices (coordinator, options = {}) {
  coordinator.throttle = new LoginThrottle(throttleOptions(coordinator, options))
  return {
    'auth-check': (msg) => coordinator.throttle.check(...queryOf(msg, true)),
    'auth-attempt': (msg) => coordinator.throttle.attempt(...queryOf(msg, false)),
    'auth-success' (msg) {
      if (typeof msg.address === 'string' && typeof msg.user === 'string') coordinator.throttle.succeed(msg.address, msg.user, msg.counted === true)
    }
  }
}

/**
 * @param {{log: {warn: Function}}} coordinator
 * @param {object} [options] LoginThrottle options (tests)
 * @returns {object} the throttle's options, its locks logged by the coordinator
 */
function throttleOptions (coordinator, options = {}) {
  return { onLock: lockLogger(coordinator.log), ...options }
}

// Anything else on the channel (a mod may send objects that look like ours)
// is refused rather than counted.
function queryOf (msg, userOptional) {
  if (typeof msg.address !== 'string' || !(typeof msg.user === 'string' || (userOptional && msg.user === null))) {
    throw new TypeError('malformed ' + msg.act)
  }
  return [msg.address, msg.user]
}

function lockLogger (log) {
  return function logLock (what, seconds) {
    log.warn('too many failed logins: ' + what + ' locked for ' + seconds + ' s')
  }
}

module.exports = { createThrottleClient, throttleServices, throttleOptions, QUERY_TIMEOUT_MS }
