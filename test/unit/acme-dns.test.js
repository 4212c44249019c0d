'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { parseDnsServer } = require('../../lib/acme/dns/names')
const { recordName } = require('../../lib/acme/dns')
const { nameProblem, challengesForName, acmeChallenges } = require('../../lib/acme/names')
const { WorkerCertificates } = require('../../lib/acme/worker')

describe('dns-01 helpers', () => {
  it('parseDnsServer should read an IP address with and without a port', () => {
    assert.deepEqual(parseDnsServer('192.0.2.53'), { host: '192.0.2.53', port: 53 })
    assert.deepEqual(parseDnsServer('127.0.0.1:5353'), { host: '127.0.0.1', port: 5353 })
    assert.deepEqual(parseDnsServer('[2001:db8::53]:5353'), { host: '2001:db8::53', port: 5353 })
    assert.deepEqual(parseDnsServer('[2001:db8::53]'), { host: '2001:db8::53', port: 53 })
    assert.deepEqual(parseDnsServer('2001:db8::53'), { host: '2001:db8::53', port: 53 })
  })

  it('recordName should put the record under the name, without the wildcard label', () => {
    assert.equal(recordName('*.example.com'), '_acme-challenge.example.com')
    assert.equal(recordName('www.example.com'), '_acme-challenge.www.example.com')
  })

  it('nameProblem should take "*.<name>" only with acme.dns, and no other wildcard', () => {
    assert.equal(nameProblem('*.example.com', true), null)
    assert.equal(nameProblem('*.example.com', false), 'is a wildcard, which a CA validates only over DNS (dns-01): set acme.dns')
    assert.equal(nameProblem('*.com', true), 'is not a valid wildcard such as "*.example.com"')
    for (const name of ['www.*.example.com', '*foo.example.com', '*.*.example.com']) {
      assert.equal(nameProblem(name, true), 'is not a wildcard a CA issues for: only a whole leftmost label may be "*", as in "*.example.com"', name)
    }
  })

  it('should validate a wildcard by dns-01 alone, and offer dns-01 by default only with acme.dns', () => {
    const config = (dns, challenge = null) => ({ disableNonEncryptedServer: false, acme: { challenge, dns } })
    assert.deepEqual(acmeChallenges(config(null)), ['http-01', 'tls-alpn-01'])
    assert.deepEqual(acmeChallenges(config({ provider: 'exec' })), ['http-01', 'tls-alpn-01', 'dns-01'])
    assert.deepEqual(acmeChallenges(config(null, ['dns-01', 'http-01'])), ['http-01'])
    const all = ['http-01', 'tls-alpn-01', 'dns-01']
    assert.deepEqual(challengesForName('*.example.com', all), ['dns-01'])
    assert.deepEqual(challengesForName('www.example.com', all), all)
  })
})

describe('WorkerCertificates#managedName(servername)', () => {
  it('should cover a name by itself first, else by the wildcard one label up only', () => {
    const certificates = new WorkerCertificates(null)
    certificates.configure({ acme: { enabled: true, names: ['*.example.com', 'www.example.com'], onDemand: null } }, {})
    assert.equal(certificates.managedName('www.example.com'), 'www.example.com')
    assert.equal(certificates.managedName('shop.example.com'), '*.example.com')
    assert.equal(certificates.managedName('example.com'), null)
    assert.equal(certificates.managedName('a.shop.example.com'), null)
    assert.equal(certificates.managedName('shop.example.org'), null)
    assert.equal(certificates.managedName('localhost'), null)
  })
})
