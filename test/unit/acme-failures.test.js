'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { explainFailure } = require('../../lib/acme/failures')

const NONE = { eab: null, setting: 'acme' }

describe('explainFailure(words, issuer)', () => {
  it('should add what to change to the failures a CA reports, in its own words', () => {
    const cases = [
      ['DNS problem: NXDOMAIN looking up A for www.example.com - check that a DNS record exists for this domain',
        'the name must resolve, in public DNS, to this server'],
      ['Get "http://acme-test.example:29392/.well-known/acme-challenge/x": dial tcp 127.0.0.1:29392: connect: connection refused',
        'the CA could not reach this server for the challenge: http-01 needs port 80 and tls-alpn-01 port 443 open to it'],
      ['127.0.0.1: Fetching http://www.example.com/.well-known/acme-challenge/x: Timeout during connect (likely firewall problem)',
        'the CA could not reach this server for the challenge: http-01 needs port 80 and tls-alpn-01 port 443 open to it'],
      ['The key authorization file from the server did not match this challenge "abc" != "def"',
        'the CA reached a server that did not give svr\'s answer: another server, or a proxy or load balancer in front, answers for the name'],
      ['too many certificates (5) already issued for this exact set of identifiers in the last 168h0m0s, retry after 2026-11-29 12:00:00 UTC',
        'a rate limit of the CA: it passes by itself, and svr waits as long as the CA says'],
      ["ACME server policy requires newAccount requests must include a value for the 'externalAccountBinding' field",
        'the CA requires External Account Binding: set acme.eab to the key id and HMAC key it gave']
    ]
    for (const [words, hint] of cases) assert.equal(explainFailure(words, NONE), words + ' (' + hint + ')')
  })

  it('should say the binding was refused when one is set, and leave words it does not understand alone', () => {
    assert.match(explainFailure('EAB MAC mismatch', { eab: { keyId: 'k' }, setting: 'acme' }), /\(the CA refused the External Account Binding: check acme\.eab\.keyId/)
    assert.equal(explainFailure('Policy forbids issuing for name', NONE), 'Policy forbids issuing for name')
  })

  it('should name the entry of acme.issuers the failure came from', () => {
    const second = { eab: null, setting: 'acme.issuers[1]' }
    assert.equal(explainFailure("newAccount requests must include a value for the 'externalAccountBinding' field", second),
      "newAccount requests must include a value for the 'externalAccountBinding' field (the CA requires External Account Binding: " +
      'set acme.issuers[1].eab to the key id and HMAC key it gave)')
    assert.equal(explainFailure('Order includes unrecognized profile name "nope"', second),
      'Order includes unrecognized profile name "nope" (the CA does not offer this profile: set acme.issuers[1].profile or acme.profile ' +
      'to one its directory lists under meta.profiles, or null)')
    assert.equal(explainFailure('Order includes unrecognized profile name "nope"', NONE),
      'Order includes unrecognized profile name "nope" (the CA does not offer this profile: set acme.profile to one its directory lists under meta.profiles, or null)')
  })
})
