'use strict'

const path = require('node:path')
const { upstreamProblem } = require('./upstream-url')
const { servernameProblem, proxyTlsWarnings } = require('./upstream-tls')

// A route's CA file, or each of its list, as an absolute path.
function resolveProxyCa (tls, configDir) {
  if (typeof tls.ca === 'string') tls.ca = path.resolve(configDir, tls.ca)
  else if (Array.isArray(tls.ca)) tls.ca = tls.ca.map((file) => path.resolve(configDir, file))
}

// The proxy's keys to the configuration loader (lib/config/load.js).
const proxyConfig = {
  keywords: { svrUpstream: upstreamProblem, svrServername: servernameProblem },
  warnings: proxyTlsWarnings,
  resolve (config, configDir) {
    for (const route of config.proxy) resolveProxyCa(route.tls, configDir)
  }
}

module.exports = { proxyConfig }
