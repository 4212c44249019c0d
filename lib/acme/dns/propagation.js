'use strict'

const dns = require('node:dns')
const { svrError } = require('../../errors')
const { enclosingZones } = require('./names')

const POLL_MS = 2000
const QUERY_TIMEOUT_MS = 3000

/**
 * The servers to ask whether a record is out: acme.dns.resolvers when set,
 * else the provider's own (the server it updates) and the zone's name
 * servers as the system's resolver finds them, so that the CA, which asks
 * them too, finds the record.
 * @param {string} fqdn the record's name
 * @param {string[]|null} resolvers acme.dns.resolvers
 * @param {string[]} known the provider's authoritative servers
 * @returns {Promise<string[]>} addresses, with ports where not 53
 */
async function propagationServers (fqdn, resolvers, known) {
  if (resolvers !== null) return resolvers
  const found = new Set(known)
  for (const address of await zoneNameServers(fqdn)) found.add(address)
  if (found.size === 0) throw new Error('cannot find the name servers of ' + fqdn + '\'s zone to wait for the record: set acme.dns.resolvers')
  return [...found]
}

// The addresses of the name servers of the closest zone above fqdn; none when it cannot be told.
async function zoneNameServers (fqdn) {
  const resolver = new dns.promises.Resolver({ timeout: QUERY_TIMEOUT_MS, tries: 1 })
  for (const zone of enclosingZones(fqdn)) {
    let names
    try {
      names = await resolver.resolveNs(zone)
    } catch {
      continue
    }
    const addresses = []
    for (const name of names) {
      for (const family of ['resolve4', 'resolve6']) addresses.push(...await resolver[family](name).catch(() => []))
    }
    return addresses.map((address) => address.includes(':') ? '[' + address + ']' : address)
  }
  return []
}

/**
 * Wait until every server answers the TXT record with the value.
 * @param {string} fqdn
 * @param {string} value
 * @param {string[]} servers
 * @param {number} timeout ms
 * @returns {Promise<void>}
 * @throws {SvrError} SVR_ERR_ACME_DNS_PROPAGATION naming the servers that never did
 */
async function waitForRecord (fqdn, value, servers, timeout) {
  const deadline = Date.now() + timeout
  let pending = servers
  for (;;) {
    const answered = await Promise.all(pending.map((server) => hasRecord(server, fqdn, value)))
    pending = pending.filter((server, i) => !answered[i])
    if (pending.length === 0) return
    if (Date.now() + POLL_MS > deadline) throw svrError('SVR_ERR_ACME_DNS_PROPAGATION', [fqdn, timeout / 1000, pending.join(', ')])
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

async function hasRecord (server, fqdn, value) {
  const resolver = new dns.promises.Resolver({ timeout: QUERY_TIMEOUT_MS, tries: 1 })
  try {
    resolver.setServers([server])
    const records = await resolver.resolveTxt(fqdn)
    return records.some((chunks) => chunks.join('') === value)
  } catch {
    return false
  }
}

module.exports = { propagationServers, waitForRecord }
