'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { acmeIssuers, issuerKey, issuersProblems } = require('../../lib/acme/issuers')

const ACME = {
  directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory',
  eab: null,
  keyType: 'ecdsa-p384',
  profile: 'tlsserver',
  issuers: null
}

describe('acmeIssuers(acme)', () => {
  it('should make one CA of the top-level keys when issuers is null', () => {
    assert.deepEqual(acmeIssuers({ ...ACME, eab: { keyId: 'k', hmacKeyFile: '/k' } }), [{
      key: 'acme-v02.api.letsencrypt.org-directory',
      setting: 'acme',
      pointer: '/acme',
      directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory',
      eab: { keyId: 'k', hmacKeyFile: '/k' },
      keyType: 'ecdsa-p384',
      profile: 'tlsserver'
    }])
  })

  it('should take keyType and profile from the top level when an entry has none, and never its eab', () => {
    const issuers = acmeIssuers({
      ...ACME,
      eab: { keyId: 'top', hmacKeyFile: '/top' },
      issuers: [
        { directoryUrl: 'https://acme.zerossl.com/v2/DV90', eab: { keyId: 'z', hmacKeyFile: '/z' }, keyType: 'rsa2048', profile: null },
        { directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory', eab: null, keyType: null, profile: 'shortlived' }
      ]
    })
    assert.deepEqual(issuers.map(({ key, setting, pointer, eab, keyType, profile }) => ({ key, setting, pointer, eab, keyType, profile })), [
      { key: 'acme.zerossl.com-v2-DV90', setting: 'acme.issuers[0]', pointer: '/acme/issuers/0', eab: { keyId: 'z', hmacKeyFile: '/z' }, keyType: 'rsa2048', profile: 'tlsserver' },
      { key: 'acme-v02.api.letsencrypt.org-directory', setting: 'acme.issuers[1]', pointer: '/acme/issuers/1', eab: null, keyType: 'ecdsa-p384', profile: 'shortlived' }
    ])
  })
})

describe('issuerKey(directoryUrl)', () => {
  it('should name a CA by its host, port and path, safe as a folder and a store key', () => {
    assert.equal(issuerKey('https://127.0.0.1:14000/dir'), '127.0.0.1-14000-dir')
    assert.equal(issuerKey('https://acme-staging-v02.api.letsencrypt.org/directory'), 'acme-staging-v02.api.letsencrypt.org-directory')
    assert.equal(issuerKey('https://[::1]:8443/acme/dir/'), '1-8443-acme-dir')
    assert.equal(issuerKey('https://ca.example/a%2F..%2Fb?x=1'), 'ca.example-a-2F..-2Fb')
    assert.equal(issuerKey('not a url'), 'invalid')
  })

  it('should tell staging from production, and one port from another', () => {
    const keys = ['https://acme-staging-v02.api.letsencrypt.org/directory', 'https://acme-v02.api.letsencrypt.org/directory',
      'https://127.0.0.1:14000/dir', 'https://127.0.0.1:14001/dir'].map(issuerKey)
    assert.equal(new Set(keys).size, 4, keys.join(' '))
  })
})

describe('issuersProblems(acme)', () => {
  it('should refuse a CA listed twice, by the pointer of the second entry', () => {
    assert.deepEqual(issuersProblems({ issuers: [{ directoryUrl: 'https://a.example/dir' }, { directoryUrl: 'https://b.example/dir' }, { directoryUrl: 'https://A.example/dir' }] }),
      ['/acme/issuers/2/directoryUrl: the same CA as /acme/issuers/0 (list each CA once)'])
    assert.deepEqual(issuersProblems({ issuers: null }), [])
  })
})
