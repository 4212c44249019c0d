'use strict'

// What a CA's words about a failed order mean for the operator: each
// pattern, in the order tried, and what to change. acme-client keeps only
// the CA's detail text (RFC 8555 problem documents' `detail`), so the kind
// of failure is read from it; the texts are those of Let's Encrypt's
// Boulder and of Pebble, which share them.
const EXPLANATIONS = [
  {
    pattern: /external\s*account|\bEAB\b/i,
    explain: (settings) => settings.eab === null
      ? 'the CA requires External Account Binding: set acme.eab to the key id and HMAC key it gave'
      : 'the CA refused the External Account Binding: check acme.eab.keyId and the key in acme.eab.hmacKeyFile'
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
 * @param {{eab: object|null}} settings the configuration's acme
 * @returns {string} the words, with what to change when they are understood
 */
function explainFailure (words, settings) {
  for (const { pattern, explain } of EXPLANATIONS) {
    if (pattern.test(words)) return words + ' (' + explain(settings) + ')'
  }
  return words
}

module.exports = { explainFailure }
