'use strict'

const dns = require('node:dns')
const { runProgram } = require('./run')
const { parseDnsServer, enclosingZones } = require('./names')

// How long one nsupdate run may take: its own timeouts are 300 s.
const NSUPDATE_TIMEOUT_MS = 30000

/**
 * DNS-01 records through RFC 2136 dynamic updates signed with TSIG, sent
 * by BIND's nsupdate (Debian: bind9-dnsutils), which speaks to BIND, Knot,
 * PowerDNS and most self-hosted DNS servers; the TSIG key stays in the
 * operator's key file (as `tsig-keygen` writes it), never on a command line.
 */
class Rfc2136Provider {
  /**
   * @param {{server: string, tsigKeyFile: string|null, zone: string|null, ttl: number}} settings acme.dns
   */
  constructor (settings) {
    this.settings = settings
    // Checked with the configuration (lib/acme/names.js).
    this.server = parseDnsServer(settings.server)
    // fqdn of a record -> its zone, found once.
    this.zones = new Map()
  }

  /** @returns {string[]} where records appear first: the server updated */
  authoritative () {
    return [this.settings.server]
  }

  async present (fqdn, value) {
    await this.update(fqdn, 'update add ' + fqdn + '. ' + this.settings.ttl + ' IN TXT "' + value + '"')
  }

  async cleanup (fqdn, value) {
    await this.update(fqdn, 'update delete ' + fqdn + '. IN TXT "' + value + '"')
  }

  async update (fqdn, line) {
    const zone = await this.zoneOf(fqdn)
    const script = ['server ' + this.server.host + ' ' + this.server.port, 'zone ' + zone + '.', line, 'send', ''].join('\n')
    const args = this.settings.tsigKeyFile === null ? [] : ['-k', this.settings.tsigKeyFile]
    await runProgram('nsupdate', args, { input: script, timeout: NSUPDATE_TIMEOUT_MS })
  }

  // acme.dns.zone, or the closest enclosing zone the server has an SOA for.
  async zoneOf (fqdn) {
    if (this.settings.zone !== null) return this.settings.zone.replace(/\.$/, '')
    if (this.zones.has(fqdn)) return this.zones.get(fqdn)
    const resolver = new dns.promises.Resolver({ timeout: 3000, tries: 2 })
    resolver.setServers([this.settings.server])
    for (const candidate of enclosingZones(fqdn)) {
      try {
        await resolver.resolveSoa(candidate)
        this.zones.set(fqdn, candidate)
        return candidate
      } catch {
        // No zone apex here at this server: one label up.
      }
    }
    throw new Error('the DNS server ' + this.settings.server + ' holds no zone for ' + fqdn + ' (set acme.dns.zone)')
  }
}

module.exports = { Rfc2136Provider }
