'use strict'

/**
 * One piece of work per key at a time: callers that come while it runs
 * share its promise, and the next caller after it settles starts anew.
 * @template T
 * @param {Map<*, Promise<T>>} inFlight the work under way, by key
 * @param {*} key
 * @param {() => Promise<T>} start
 * @returns {Promise<T>}
 */
function singleFlight (inFlight, key, start) {
  let pending = inFlight.get(key)
  if (pending === undefined) {
    pending = start().finally(() => inFlight.delete(key))
    inFlight.set(key, pending)
  }
  return pending
}

module.exports = { singleFlight }
