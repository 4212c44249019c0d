'use strict'

const net = require('node:net')
const { hostPart } = require('../hosts/server-names')
const { renewBeforeProblem } = require('./renewal')
const { issuersProblems, directoryUrls } = require('./issuers')
const { parseDnsServer } = require('./dns/names')

// A DNS label: letters, digits and inner hyphens, at most 63 characters.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const MAX_NAME_LENGTH = 253
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * The names automatic HTTPS gets certificates for: `acme.names`, or else
 * `domain` and every `sni` name that is no wildcard, and with `acme.dns`
 * the wildcards a CA issues for too ("*.example.com": a CA validates a
 * wildcard only over DNS). Lower case, without duplicates, in the order given.
 * @param {object} config validated, with defaults
 * @returns {string[]}
 */
function acmeNames (config) {
  const wildcards = config.acme.dns !== null
  const given = config.acme.names !== null
    ? config.acme.names
    : [config.domain, ...Object.keys(config.sni).map(hostPart)]
        .filter((name) => name !== '' && (!name.includes('*') || (wildcards && isWildcard(name))))
  return [...new Set(given.map((name) => name.toLowerCase()))]
}

// "*." and then a name with no other "*": the only wildcard CAs issue for.
function isWildcard (name) {
  return name.startsWith('*.') && !name.slice(2).includes('*')
}

/**
 * Why a CA cannot issue for a name, or null.
 * @param {string} name
 * @param {boolean} [dns] whether dns-01 is set up (acme.dns), which wildcards need
 * @returns {string|null}
 */
function nameProblem (name, dns = false) {
  if (net.isIP(name) !== 0) return 'is an IP address; certificates are obtained for DNS names only'
  if (isWildcard(name)) {
    if (!dns) return 'is a wildcard, which a CA validates only over DNS (dns-01): set acme.dns'
    const base = nameProblem(name.slice(2))
    return base === null ? null : 'is not a valid wildcard such as "*.example.com"'
  }
  if (name.includes('*')) return 'is not a wildcard a CA issues for: only a whole leftmost label may be "*", as in "*.example.com"'
  const lower = name.toLowerCase()
  const labels = lower.split('.')
  if (lower.length > MAX_NAME_LENGTH || labels.length < 2 || !labels.every((label) => LABEL.test(label))) {
    return 'is not a valid DNS name with a domain, such as "www.example.com"'
  }
  return null
}

/**
 * The configuration problems of `acme` that JSON Schema cannot express,
 * as "<JSON pointer>: <message>" lines. Nothing when it is off.
 * @param {object} data the configuration as validated (defaults filled in; may be invalid elsewhere)
 * @returns {string[]}
 */
function acmeProblems (data) {
  const acme = data.acme
  if (acme === null || typeof acme !== 'object' || acme.enabled !== true) return []
  const problems = []
  if (data.secure !== true) problems.push('/acme/enabled: automatic HTTPS needs "secure": true')
  if (acme.agreeToTerms !== true) {
    problems.push('/acme/agreeToTerms: must be true: the certificate authority issues certificates only to accounts that accept its terms of service (read them at ' + directoryUrls(acme).map(({ url }) => url).join(', ') + ')')
  }
  if (typeof acme.email === 'string' && acme.email !== '' && !EMAIL.test(acme.email)) problems.push('/acme/email: must be an e-mail address such as "admin@example.com"')
  problems.push(...directoryUrls(acme).flatMap(({ pointer, url }) => directoryProblems(pointer, url, acme)), ...issuersProblems(acme), ...namesProblems(data))
  const renewBefore = renewBeforeProblem(acme.renewBeforeDays)
  if (renewBefore !== null) problems.push(renewBefore)
  problems.push(...challengeProblems(data), ...dnsProblems(acme.dns), ...onDemandProblems(acme.onDemand))
  if (acme.storageDirectory === null && data.stateDirectory === null) {
    problems.push('/acme/storageDirectory: automatic HTTPS keeps its account key and certificates on disk, so that a restart never orders again: set it, or "stateDirectory"')
  }
  return problems
}

const CHALLENGES = ['http-01', 'tls-alpn-01', 'dns-01']

/**
 * The challenges automatic HTTPS tries, in the configured order: those of
 * `acme.challenge` (every one when null) that can work. http-01 needs the
 * plain-HTTP server, which disableNonEncryptedServer turns off; tls-alpn-01
 * the secure one, which automatic HTTPS always has; dns-01 `acme.dns`.
 * @param {object} data the configuration
 * @returns {string[]}
 */
function acmeChallenges (data) {
  const { challenge, dns } = data.acme
  const wanted = challenge === null ? CHALLENGES : Array.isArray(challenge) ? challenge : [challenge]
  return wanted.filter((type) => type === 'http-01' ? data.disableNonEncryptedServer !== true : type !== 'dns-01' || isObject(dns))
}

/**
 * @param {string} name
 * @param {string[]} challenges the configuration's (acmeChallenges)
 * @returns {string[]} those that can validate the name: dns-01 alone for a wildcard
 */
function challengesForName (name, challenges) {
  return isWildcard(name) ? challenges.filter((type) => type === 'dns-01') : challenges
}

function challengeProblems (data) {
  const { challenge, dns } = data.acme
  // Values of the wrong form have their own schema message.
  const listed = Array.isArray(challenge) ? challenge : [challenge]
  const valid = challenge === null || (listed.length !== 0 && listed.every((type) => CHALLENGES.includes(type)))
  if (!valid) return []
  if (challenge !== null && listed.includes('dns-01') && !isObject(dns)) {
    return ['/acme/challenge: dns-01 needs "acme.dns", which says how to put up the TXT records']
  }
  if (acmeChallenges(data).length !== 0) return []
  return ['/acme/challenge: http-01 is the only challenge allowed, and it needs the plain-HTTP server on "port", which ' +
    '"disableNonEncryptedServer" turns off, so no certificate could ever be validated: add "tls-alpn-01" or use null']
}

// What `acme.dns` needs beyond its schema: the settings of its provider.
function dnsProblems (dns) {
  if (!isObject(dns)) return []
  const problems = []
  if (dns.provider === 'rfc2136' && typeof dns.server !== 'string') problems.push('/acme/dns/server: "rfc2136" needs the IP address of the DNS server that takes the updates')
  if (typeof dns.server === 'string' && parseDnsServer(dns.server) === null) problems.push('/acme/dns/server: must be an IP address, with ":port" when not 53, such as "192.0.2.53" or "[2001:db8::53]:5353"')
  if (dns.provider === 'exec' && typeof dns.command !== 'string') problems.push('/acme/dns/command: "exec" needs the program that puts up and removes the records')
  if (Array.isArray(dns.resolvers)) {
    dns.resolvers.forEach((resolver, i) => {
      if (typeof resolver === 'string' && parseDnsServer(resolver) === null) problems.push('/acme/dns/resolvers/' + i + ': must be an IP address, with ":port" when not 53')
    })
  }
  return problems
}

function onDemandProblems (onDemand) {
  if (!isObject(onDemand)) return []
  if (onDemand.ask === null && onDemand.allow === null) {
    return ['/acme/onDemand: set "ask" or "allow" (or both): without either, anyone pointing a name at the server would have it ordered for']
  }
  if (typeof onDemand.ask !== 'string') return []
  let url
  try {
    url = new URL(onDemand.ask)
  } catch {
    return ['/acme/onDemand/ask: must be an http or https URL such as "http://127.0.0.1:5000/domain-check"']
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? [] : ['/acme/onDemand/ask: must be an http or https URL such as "http://127.0.0.1:5000/domain-check"']
}

function wildcardProblems (data, names) {
  if (!isObject(data.acme.dns)) return []
  const problems = []
  const challenges = acmeChallenges(data)
  names.forEach((name, i) => {
    if (typeof name === 'string' && isWildcard(name) && challengesForName(name, challenges).length === 0) {
      problems.push('/acme/names/' + i + ': ' + JSON.stringify(name) + ' is a wildcard, which only dns-01 validates: add "dns-01" to acme.challenge or use null')
    }
  })
  return problems
}

function isObject (value) {
  return value !== null && typeof value === 'object'
}

function namesProblems (data) {
  const { names, dns } = data.acme
  const problems = []
  if (Array.isArray(names)) {
    names.forEach((name, i) => {
      const problem = typeof name === 'string' ? nameProblem(name, isObject(dns)) : null
      if (problem !== null) problems.push('/acme/names/' + i + ': ' + JSON.stringify(name) + ' ' + problem)
    })
    if (names.length === 0) problems.push('/acme/names: must name at least one host name')
    return [...problems, ...wildcardProblems(data, names)]
  }
  // Invalid domain or sni values have their own schema messages.
  if (names !== null || typeof data.domain !== 'string' || data.sni === null || typeof data.sni !== 'object') return problems
  if (acmeNames(data).length === 0) problems.push('/acme/names: no names to certify: set "domain", "sni" names or "acme.names"')
  const domainProblem = data.domain === '' ? null : nameProblem(data.domain, isObject(dns))
  if (domainProblem !== null) problems.push('/domain: ' + JSON.stringify(data.domain) + ' ' + domainProblem + ' (automatic HTTPS certifies it; set "acme.names" to choose others)')
  return problems
}

function directoryProblems (pointer, given, acme) {
  if (typeof given !== 'string') return []
  let url
  try {
    url = new URL(given)
  } catch {
    return [pointer + ': must be a URL such as "https://acme-v02.api.letsencrypt.org/directory"']
  }
  if (url.protocol === 'https:') return []
  if (url.protocol === 'http:' && acme.allowInsecureDirectory === true) return []
  return [pointer + ': must be an https URL (the account key signs requests and certificates come back over it); "allowInsecureDirectory": true accepts http for a local test CA']
}

module.exports = { acmeChallenges, acmeNames, acmeProblems, nameProblem, challengesForName, isWildcard }
