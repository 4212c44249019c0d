'use strict'

const { runProgram } = require('./run')

const COMMAND_TIMEOUT_MS = 120000

/**
 * DNS-01 records through a program of the operator's, for any DNS API: run
 * as `<command> present <fqdn> <value>` and `<command> cleanup <fqdn>
 * <value>` (the arguments of lego's exec provider), without a shell; exit 0
 * means done.
 */
class ExecProvider {
  /**
   * @param {{command: string}} settings acme.dns
   */
  constructor (settings) {
    this.command = settings.command
  }

  /** @returns {string[]} none known: the zone's own name servers are asked */
  authoritative () {
    return []
  }

  present (fqdn, value) {
    return runProgram(this.command, ['present', fqdn, value], { timeout: COMMAND_TIMEOUT_MS })
  }

  cleanup (fqdn, value) {
    return runProgram(this.command, ['cleanup', fqdn, value], { timeout: COMMAND_TIMEOUT_MS })
  }
}

module.exports = { ExecProvider }
