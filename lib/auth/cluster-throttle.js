'use strict'

const cluster = require('node:cluster')
const { message } = require('../ipc')
const { LoginThrottle } = require('./throttle')

// A worker waits this long for the primary's verdict. The primary answers
// from memory, so only a primary that is gone or wedged misses it; the
// login is then judged without the throttle rather than hanging.
const QUERY_TIMEOUT_MS = 1000

const pending = new Map()
let lastQueryId = 0
// --single-threaded: the one process keeps the counters itself; at module
// level, so they survive a reload as they do in the primary.
let local = null

/**
 * The failed-login throttle as a worker sees it: in a cluster worker,
 * queries to the primary, which keeps one LoginThrottle for all workers
 * (`auth-check` / `auth-attempt` answered by `auth-verdict`, `auth-success`
 * without answer); in a single process, a LoginThrottle of its own.
 * @param {{warn: Function}} log
 * @returns {{check: (address: string, user: string|null) => Promise<number>,
 *   attempt: (address: string, user: string) => Promise<number>,
 *   succeed: (address: string, user: string, counted: boolean) => void}} check and attempt
 *   resolve to the seconds the key is locked for (0: go ahead)
 */
function createThrottleClient (log) {
  if (!cluster.isWorker) return localClient(log)
  return {
    check: (address, user) => query('auth-check', address, user),
    attempt: (address, user) => query('auth-attempt', address, user),
    succeed (address, user, counted) {
      if (process.connected) process.send(message('auth-success', { address, user, counted }))
    }
  }
}

function localClient (log) {
  if (local === null) local = new LoginThrottle({ onLock: lockLogger(log) })
  const throttle = local
  return {
    check: (address, user) => Promise.resolve(throttle.check(address, user)),
    attempt: (address, user) => Promise.resolve(throttle.attempt(address, user)),
    succeed: (address, user, counted) => throttle.succeed(address, user, counted)
  }
}

function query (act, address, user) {
  if (!process.connected) return Promise.resolve(0)
  const id = ++lastQueryId
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      resolve(0)
    }, QUERY_TIMEOUT_MS)
    pending.set(id, { resolve, timer })
    process.send(message(act, { id, address, user }))
  })
}

/**
 * Worker side of `auth-verdict`: hand the primary's answer to the request
 * waiting for it. A late answer (after QUERY_TIMEOUT_MS) is dropped.
 * @param {{id: number, retryAfter: number}} msg
 */
function settleThrottleQuery (msg) {
  const entry = pending.get(msg.id)
  if (entry === undefined) return
  pending.delete(msg.id)
  clearTimeout(entry.timer)
  entry.resolve(Number.isInteger(msg.retryAfter) && msg.retryAfter > 0 ? msg.retryAfter : 0)
}

/**
 * Primary side: one LoginThrottle for every worker, and the dispatch-table
 * entries that answer the workers' queries. It lives as long as the
 * primary, so counters and locks survive reloads and worker restarts.
 * @param {{warn: Function}} log
 * @param {object} [options] LoginThrottle options (tests)
 * @returns {Object<string, (msg: object, worker: import('node:cluster').Worker) => void>}
 */
function createThrottleHandlers (log, options = {}) {
  const throttle = new LoginThrottle({ onLock: lockLogger(log), ...options })
  return {
    'auth-check' (msg, worker) {
      if (isQuery(msg, true)) reply(worker, msg.id, throttle.check(msg.address, msg.user))
    },
    'auth-attempt' (msg, worker) {
      if (isQuery(msg, false)) reply(worker, msg.id, throttle.attempt(msg.address, msg.user))
    },
    'auth-success' (msg) {
      if (typeof msg.address === 'string' && typeof msg.user === 'string') throttle.succeed(msg.address, msg.user, msg.counted === true)
    }
  }
}

// Anything else on the channel (a mod may send objects that look like ours)
// is ignored rather than allowed to throw in the primary.
function isQuery (msg, userOptional) {
  return Number.isInteger(msg.id) && typeof msg.address === 'string' &&
    (typeof msg.user === 'string' || (userOptional && msg.user === null))
}

function reply (worker, id, retryAfter) {
  if (worker.isConnected()) worker.send(message('auth-verdict', { id, retryAfter }))
}

function lockLogger (log) {
  return function logLock (what, seconds) {
    log.warn('too many failed logins: ' + what + ' locked for ' + seconds + ' s')
  }
}

module.exports = { createThrottleClient, settleThrottleQuery, createThrottleHandlers, QUERY_TIMEOUT_MS }
