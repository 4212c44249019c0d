'use strict'

const path = require('node:path')
const { upstreamProblem } = require('./upstream-url')
const { servernameProblem, proxyTlsWarnings } = require('./upstream-tls')
const { upstreamUrl, upstreamEntry } = require('./upstream-entry')

// A route's CA file, or each of its list, as an absolute path.
function resolveProxyCa (tls, configDir) {
  if (typeof tls.ca === 'string') tls.ca = path.resolve(configDir, tls.ca)
  else if (Array.isArray(tls.ca)) tls.ca = tls.ca.map((file) => path.resolve(configDir, file))
}

/**
 * Checks across a route's keys that the schema cannot express.
 * @param {object} data the configuration as validated
 * @returns {string[]} "<JSON pointer>: <message>"
 */
function proxyProblems (data) {
  if (!Array.isArray(data.proxy)) return []
  const problems = []
  data.proxy.forEach((route, number) => {
    if (route === null || typeof route !== 'object' || !Array.isArray(route.upstreams) || route.upstreams.length === 0) return
    if (route.upstreams.every((entry) => entry !== null && entry.backup === true)) {
      problems.push('/proxy/' + number + '/upstreams: every upstream is a backup; at least one must not be (backups serve only while the others are down)')
    }
    const seen = new Set()
    route.upstreams.forEach((entry, index) => {
      const url = upstreamUrl(entry)
      if (typeof url !== 'string') return
      if (seen.has(url)) problems.push('/proxy/' + number + '/upstreams/' + index + ': ' + JSON.stringify(url) + ' is listed twice (give it a `weight` instead)')
      seen.add(url)
    })
  })
  return problems
}

// The proxy's keys to the configuration loader (lib/config/load.js).
const proxyConfig = {
  keywords: { svrUpstream: upstreamProblem, svrServername: servernameProblem },
  problems: proxyProblems,
  warnings: proxyTlsWarnings,
  resolve (config, configDir) {
    for (const route of config.proxy) {
      resolveProxyCa(route.tls, configDir)
      // Every reader sees one form, with the schema's defaults.
      route.upstreams = route.upstreams.map(upstreamEntry)
    }
  }
}

module.exports = { proxyConfig }
