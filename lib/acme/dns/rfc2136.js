'use strict'

const dns = require('node:dns')
const { runProgram } = require('./run')

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
    this.server = splitServer(settings.server)
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
    const labels = fqdn.split('.')
    for (let i = 1; i < labels.length - 1; i++) {
      const candidate = labels.slice(i).join('.')
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

/**
 * @param {string} server "host", "host:port", "[v6]:port" or a bare IPv6 address
 * @returns {{host: string, port: number}}
 */
function splitServer (server) {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server)
  if (bracketed !== null) return { host: bracketed[1], port: bracketed[2] === undefined ? 53 : Number(bracketed[2]) }
  const parts = server.split(':')
  if (parts.length === 2) return { host: parts[0], port: Number(parts[1]) }
  return { host: server, port: 53 }
}

module.exports = { Rfc2136Provider, splitServer }
