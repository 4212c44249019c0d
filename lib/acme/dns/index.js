'use strict'

const { Rfc2136Provider } = require('./rfc2136')
const { ExecProvider } = require('./exec')
const { propagationServers, waitForRecord } = require('./propagation')

const PROVIDERS = { rfc2136: Rfc2136Provider, exec: ExecProvider }

/**
 * The dns-01 challenge: the TXT record `_acme-challenge.<name>` put up
 * through the configured provider, waited for at the servers the CA asks,
 * and taken down after the validation.
 */
class DnsChallenges {
  /**
   * @param {object} settings acme.dns, resolved (paths absolute)
   * @param {object} log
   */
  constructor (settings, log) {
    this.settings = settings
    this.log = log
    this.provider = new PROVIDERS[settings.provider](settings)
    // "fqdn value" of the records put up and not yet removed.
    this.open = new Set()
  }

  /**
   * @param {string} name the identifier, without "*." for a wildcard
   * @param {string} value the record's value (the key authorization's digest)
   */
  async put (name, value) {
    const fqdn = recordName(name)
    await this.provider.present(fqdn, value)
    this.open.add(fqdn + ' ' + value)
    const servers = await propagationServers(fqdn, this.settings.resolvers, this.provider.authoritative())
    await waitForRecord(fqdn, value, servers, this.settings.propagationTimeout)
  }

  /**
   * Remove a record put up; one that could not be put up is left alone.
   * Never throws: a record left behind is logged, and harms nothing but the zone's tidiness.
   * @param {string} name
   * @param {string} value
   */
  async remove (name, value) {
    const fqdn = recordName(name)
    if (!this.open.delete(fqdn + ' ' + value)) return
    await this.provider.cleanup(fqdn, value).catch((err) => {
      this.log.warn('acme: ' + name + ': cannot remove the dns-01 record ' + fqdn + ' (' + err.message + '); remove it by hand')
    })
  }
}

function recordName (name) {
  return '_acme-challenge.' + name.replace(/^\*\./, '')
}

module.exports = { DnsChallenges, recordName, PROVIDERS }
