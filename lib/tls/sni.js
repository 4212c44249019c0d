'use strict'

const tls = require('node:tls')
const { hostPart, wildcardPattern } = require('../hosts/server-names')

/**
 * Build the SNI lookup once per worker: an exact-name table and a list of
 * wildcard patterns, most specific first. SVR.JS patched Node's private
 * context list to get wildcards, which any Node update may break; an SNICallback needs nothing
 * private.
 * @param {Object<string, {cert: string, key: string}>} entries server name → PEM contents
 * @param {object} contextOptions the TLS settings every context shares (ciphers, versions, …)
 * @returns {{lookup: (servername: string) => tls.SecureContext | null}}
 */
function createSniTable (entries, contextOptions) {
  const exact = new Map()
  const wildcards = []
  for (const name of Object.keys(entries)) {
    const host = hostPart(name).toLowerCase()
    const context = tls.createSecureContext({ ...contextOptions, cert: entries[name].cert, key: entries[name].key })
    if (host.includes('*')) {
      // The schema allows one "*" per label, so this pattern cannot backtrack badly.
      if (!wildcards.some((entry) => entry.host === host)) wildcards.push({ host, pattern: wildcardPattern(host), context })
    } else if (!exact.has(host)) {
      exact.set(host, context)
    }
  }
  // "*.shop.example.com" is a better answer than "*.example.com".
  wildcards.sort((a, b) => literalLength(b.host) - literalLength(a.host))

  function lookup (servername) {
    const name = servername.toLowerCase()
    const context = exact.get(name)
    if (context !== undefined) return context
    for (const entry of wildcards) {
      if (entry.pattern.test(name)) return entry.context
    }
    return null
  }
  return { lookup }
}

function literalLength (host) {
  return host.replace(/\*/g, '').length
}

module.exports = { createSniTable }
