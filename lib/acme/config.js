'use strict'

const path = require('node:path')
const { acmeNames, acmeProblems, acmeChallenges } = require('./names')
const { acmeIssuers } = require('./issuers')

// The loaded configuration holds the names to certify, the challenges to
// try, the issuers in order (a list even when `issuers` is null), the
// absolute storage directory, CA bundle, EAB key files and DNS settings' files, so no reader
// has to work them out again.
function resolveAcme (config, configDir) {
  const { acme } = config
  acme.names = acmeNames(config)
  acme.challenges = acmeChallenges(config)
  if (acme.storageDirectory !== null) acme.storageDirectory = path.resolve(configDir, acme.storageDirectory)
  else if (config.stateDirectory !== null) acme.storageDirectory = path.resolve(configDir, config.stateDirectory, 'acme')
  if (acme.caBundle !== null) acme.caBundle = path.resolve(configDir, acme.caBundle)
  if (acme.dns !== null) {
    acme.dns = {
      ...acme.dns,
      tsigKeyFile: acme.dns.tsigKeyFile === null ? null : path.resolve(configDir, acme.dns.tsigKeyFile),
      command: acme.dns.command === null ? null : path.resolve(configDir, acme.dns.command)
    }
  }
  acme.issuers = acmeIssuers(acme).map((issuer) => issuer.eab === null
    ? issuer
    : { ...issuer, eab: { ...issuer.eab, hmacKeyFile: path.resolve(configDir, issuer.eab.hmacKeyFile) } })
}

// `acme` to the configuration loader (lib/config/load.js).
const acmeConfig = {
  problems: acmeProblems,
  resolve: resolveAcme
}

module.exports = { acmeConfig }
