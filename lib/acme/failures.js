'use strict'

const { rateLimitWait } = require('./renewal')

// What a CA's words about a failed order mean for the operator: each
// pattern, in the order tried, and what to change. acme-client keeps only
// the CA's detail text (RFC 8555 problem documents' `detail`), so the kind
// of failure is read from it; the texts are those of Let's Encrypt's
// Boulder and of Pebble, which share them.
const EXPLANATIONS = [
  {
    pattern: /external\s*account|\bEAB\b/i,
    explain: (issuer) => issuer.eab === null
      ? 'the CA requires External Account Binding: set ' + issuer.setting + '.eab to the key id and HMAC key it gave'
      : 'the CA refused the External Account Binding: check ' + issuer.setting + '.eab.keyId and the key in ' + issuer.setting + '.eab.hmacKeyFile'
  },
  {
    pattern: /unrecognized profile|invalid ?profile|profile .*not (supported|offered|recognized)/i,
    explain: (issuer) => 'the CA does not offer this profile: set ' + (issuer.setting === 'acme' ? 'acme.profile' : issuer.setting + '.profile or acme.profile') +
      ' to one its directory lists under meta.profiles, or null'
  },
  {
    pattern: /^nsupdate .*\b(REFUSED|NOTAUTH|BADKEY|BADSIG|NOTZONE)\b/,
    explain: () => 'the DNS server refused the update: check that acme.dns.tsigKeyFile holds a key the zone allows updates with, and acme.dns.server and acme.dns.zone'
  },
  {
    pattern: /rate ?limit|too many (certificates|failed authorizations|new orders|registrations)/i,
    explain: () => 'a rate limit of the CA: it passes by itself, and svr waits as long as the CA says'
  },
  {
    pattern: /DNS problem|NXDOMAIN|SERVFAIL|no valid (A|AAAA) records|no such host/i,
    explain: () => 'the name must resolve, in public DNS, to this server'
  },
  {
    pattern: /connection refused|timeout during connect|i\/o timeout|connection reset|no route to host|network is unreachable/i,
    explain: () => 'the CA could not reach this server for the challenge: http-01 needs port 80 and tls-alpn-01 port 443 open to it'
  },
  {
    pattern: /key ?authorization|unauthorized|invalid response|incorrect validation certificate|acmeIdentifier/i,
    explain: () => 'the CA reached a server that did not give svr\'s answer: another server, or a proxy or load balancer in front, answers for the name'
  }
]

/**
 * @param {string} words what the CA said
 * @param {{eab: object|null, setting: string}} issuer the CA's entry (lib/acme/issuers.js)
 * @returns {string} the words, with what to change when they are understood
 */
function explainFailure (words, issuer) {
  for (const { pattern, explain } of EXPLANATIONS) {
    if (pattern.test(words)) return words + ' (' + explain(issuer) + ')'
  }
  return words
}

/**
 * Every CA failed an order: each one's words, and how long the soonest
 * rate limit lasts (0 when one CA failed for another reason).
 */
class ChainFailure extends Error {
  constructor (failures) {
    const words = failures.length === 1
      ? failures[0].words
      : failures.map(({ issuer, words }) => issuer.directoryUrl + ': ' + words).join('; ')
    super(words)
    this.words = words
    this.failures = failures
  }

  /**
   * @param {number} now
   * @returns {number} ms
   */
  rateLimitWait (now) {
    return Math.min(...this.failures.map(({ words }) => rateLimitWait(words, now)))
  }
}

module.exports = { explainFailure, ChainFailure }
