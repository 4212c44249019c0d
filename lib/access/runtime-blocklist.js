'use strict'

const { compileAddressList } = require('./address-list')

/**
 * Addresses blocked at run time (console `block`), on top of `blacklist`.
 * The coordinator owns the list and sends every change to each worker; each
 * worker's runtime holds one of these.
 */
class RuntimeBlocklist {
  constructor () {
    this.matches = null
    this.has = this.has.bind(this)
  }

  /**
   * @param {string[]} entries addresses, CIDR ranges, "localhost" (already validated)
   */
  set (entries) {
    this.matches = compileAddressList(entries.slice())
  }

  /**
   * @param {string} address a client address
   * @returns {boolean}
   */
  has (address) {
    return this.matches !== null && this.matches(address)
  }
}

module.exports = { RuntimeBlocklist }
