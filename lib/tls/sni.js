'use strict'

const tls = require('node:tls')

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g

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

/**
 * SVR.JS accepted "name:port" keys; a TLS server name never carries a port.
 * @param {string} name an `sni` key
 * @returns {string} the name without a port
 */
function hostPart (name) {
  const colon = name.lastIndexOf(':')
  return colon !== -1 && name.indexOf(':') === colon ? name.slice(0, colon) : name
}

/**
 * Compile a wildcard name at boot. "*" alone is one whole label; inside a
 * label ("img*.example.com") it stands for the rest of that label only.
 * @param {string} host lower-case name without port
 * @returns {RegExp} anchored, without g/y state
 */
function wildcardPattern (host) {
  const labels = host.split('.').map((label) => {
    if (label === '*') return '[^.]+'
    return label.split('*').map((part) => part.replace(REGEX_SPECIAL, '\\$&')).join('[^.]*')
  })
  return new RegExp('^' + labels.join('\\.') + '$')
}

function literalLength (host) {
  return host.replace(/\*/g, '').length
}

module.exports = { createSniTable, wildcardPattern, hostPart }
