'use strict'

const { compileAddressList } = require('./address-list')

// Addresses blocked at run time (console `block`), on top of `blacklist`.
// The primary owns the list and sends every change to each worker.
const runtime = { entries: [], matches: null }

/**
 * @param {string[]} entries addresses, CIDR ranges, "localhost" (already validated)
 */
function setRuntimeBlocklist (entries) {
  runtime.entries = entries.slice()
  runtime.matches = compileAddressList(runtime.entries)
}

/**
 * @param {string} address a client address
 * @returns {boolean}
 */
function isRuntimeBlocked (address) {
  return runtime.matches !== null && runtime.matches(address)
}

module.exports = { setRuntimeBlocklist, isRuntimeBlocked }
