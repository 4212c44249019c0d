'use strict'

/**
 * A stand-in for a node:test context in `before` hooks, which have no
 * `t.after`: helpers such as makeSite and startSvr register their cleanup
 * on it, and the suite's `after` hook runs `scope.cleanup`.
 * @returns {{after: (fn: Function) => void, cleanup: () => Promise<void>}}
 */
function createScope () {
  const cleanups = []
  return {
    after (fn) {
      cleanups.push(fn)
    },
    async cleanup () {
      while (cleanups.length !== 0) await cleanups.pop()()
    }
  }
}

module.exports = { createScope }
