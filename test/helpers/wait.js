'use strict'

/**
 * Poll until `check` resolves to something truthy, and return that.
 * @param {() => Promise<any>} check
 * @param {string} message the error when time runs out
 * @param {number} [timeout] ms
 * @returns {Promise<any>}
 */
async function waitUntil (check, message, timeout = 10000) {
  const deadline = Date.now() + timeout
  for (;;) {
    const result = await check()
    if (result) return result
    if (Date.now() > deadline) throw new Error(message)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

module.exports = { waitUntil }
