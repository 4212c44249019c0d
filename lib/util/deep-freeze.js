'use strict'

/**
 * Freeze an object and everything it holds.
 * @template T
 * @param {T} value
 * @returns {T} value
 */
function deepFreeze (value) {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze(value[key])
  }
  return value
}

module.exports = { deepFreeze }
