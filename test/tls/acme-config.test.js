'use strict'

// The `acme` configuration as --check-config judges it: every problem named
// by its JSON pointer, exit 1; a good one "configuration OK" and its storage
// directory made (0700).

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, runSvr } = require('../helpers/server')

const GOOD = {
  secure: true,
  domain: 'www.example.com',
  stateDirectory: 'state',
  acme: { enabled: true, agreeToTerms: true, email: 'admin@example.com' }
}

async function check (t, config) {
  const site = await makeSite(t, config)
  const result = await runSvr(['--config', site.configFile, '--check-config'])
  return { ...result, site }
}

describe('acme in --check-config', () => {
  it('accepts a good configuration without a default certificate and makes the storage directory 0700', async (t) => {
    const { code, stdout, stderr, site } = await check(t, GOOD)
    assert.equal(stderr, '')
    assert.equal(code, 0)
    assert.equal(stdout, 'configuration OK: ' + site.configFile + '\n')
    const stat = await fs.stat(path.join(site.dir, 'state', 'acme'))
    assert.equal(stat.mode & 0o777, 0o700)
  })

  it('refuses terms not agreed to, no secure, a bad e-mail and a plain-http directory, each by its pointer', async (t) => {
    const { code, stdout, stderr, site } = await check(t, {
      ...GOOD,
      secure: false,
      acme: { enabled: true, email: 'nobody', directoryUrl: 'http://127.0.0.1:14000/dir' }
    })
    assert.equal(code, 1)
    assert.equal(stdout, '')
    const prefix = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      prefix + '/acme/enabled: automatic HTTPS needs "secure": true',
      prefix + '/acme/agreeToTerms: must be true: the certificate authority issues certificates only to accounts that accept its terms of service (read them at http://127.0.0.1:14000/dir)',
      prefix + '/acme/email: must be an e-mail address such as "admin@example.com"',
      prefix + '/acme/directoryUrl: must be an https URL (the account key signs requests and certificates come back over it); "allowInsecureDirectory": true accepts http for a local test CA'
    ])
  })

  it('accepts a plain-http directory only when explicitly allowed', async (t) => {
    const { code, stderr } = await check(t, { ...GOOD, acme: { ...GOOD.acme, directoryUrl: 'http://127.0.0.1:14000/dir', allowInsecureDirectory: true } })
    assert.equal(stderr, '')
    assert.equal(code, 0)
  })

  it('refuses, in acme.issuers, a plain-http directory, a CA listed twice and an EAB key file that cannot be read, each by its pointer', async (t) => {
    const { code, stderr, site } = await check(t, {
      ...GOOD,
      acme: {
        ...GOOD.acme,
        issuers: [
          { directoryUrl: 'https://ca.example/dir' },
          { directoryUrl: 'http://other.example/dir' },
          { directoryUrl: 'https://CA.example/dir', keyType: 'rsa2048' }
        ]
      }
    })
    assert.equal(code, 1)
    const prefix = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      prefix + '/acme/issuers/1/directoryUrl: must be an https URL (the account key signs requests and certificates come back over it); "allowInsecureDirectory": true accepts http for a local test CA',
      prefix + '/acme/issuers/2/directoryUrl: the same CA as /acme/issuers/0 (list each CA once)'
    ])
    const eab = await check(t, { ...GOOD, acme: { ...GOOD.acme, issuers: [{ directoryUrl: 'https://ca.example/dir' }, { directoryUrl: 'https://zerossl.example/dir', eab: { keyId: 'k', hmacKeyFile: 'zerossl.key' } }] } })
    assert.equal(eab.code, 1)
    assert.equal(eab.stderr, eab.site.configFile + ': /acme/issuers/1/eab/hmacKeyFile: ' + path.join(eab.site.dir, 'zerossl.key') + ' cannot be read (ENOENT)\n')
    const bad = await check(t, { ...GOOD, acme: { ...GOOD.acme, issuers: [] } })
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /\/acme\/issuers: /)
  })

  it('refuses acme.onDemand without ask or allow, and an ask that is no http URL', async (t) => {
    const open = await check(t, { ...GOOD, acme: { ...GOOD.acme, onDemand: {} } })
    assert.equal(open.code, 1)
    assert.equal(open.stderr, open.site.configFile + ': /acme/onDemand: set "ask" or "allow" (or both): without either, anyone pointing a name at the server would have it ordered for\n')
    const ftp = await check(t, { ...GOOD, acme: { ...GOOD.acme, onDemand: { ask: 'ftp://127.0.0.1/check' } } })
    assert.equal(ftp.stderr, ftp.site.configFile + ': /acme/onDemand/ask: must be an http or https URL such as "http://127.0.0.1:5000/domain-check"\n')
    const good = await check(t, { ...GOOD, acme: { ...GOOD.acme, onDemand: { ask: 'http://127.0.0.1:5000/check', allow: ['*.customers.example.net'] } } })
    assert.equal(good.stderr, '')
    assert.equal(good.code, 0)
  })

  it('makes a folder of its own for each CA in the storage directory', async (t) => {
    const { code, stderr, site } = await check(t, { ...GOOD, acme: { ...GOOD.acme, issuers: [{ directoryUrl: 'https://ca.example/dir' }, { directoryUrl: 'https://other.example:8443/acme/directory' }] } })
    assert.equal(stderr, '')
    assert.equal(code, 0)
    assert.deepEqual((await fs.readdir(path.join(site.dir, 'state', 'acme'))).sort(), ['ca.example-dir', 'challenges', 'other.example-8443-acme-directory'])
  })

  it('refuses IP addresses, wildcards and malformed names, and an unknown challenge type', async (t) => {
    const { code, stderr, site } = await check(t, {
      ...GOOD,
      acme: { ...GOOD.acme, names: ['ok.example.com', '192.0.2.1', '*.example.com', 'bad_name.example.com', 'localhost'], challenge: 'dns-02' }
    })
    assert.equal(code, 1)
    const prefix = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      prefix + '/acme/challenge: must be "http-01", "tls-alpn-01", "dns-01", a list of them, or null',
      prefix + '/acme/names/1: "192.0.2.1" is an IP address; certificates are obtained for DNS names only',
      prefix + '/acme/names/2: "*.example.com" is a wildcard, which a CA validates only over DNS (dns-01): set acme.dns',
      prefix + '/acme/names/3: "bad_name.example.com" is not a valid DNS name with a domain, such as "www.example.com"',
      prefix + '/acme/names/4: "localhost" is not a valid DNS name with a domain, such as "www.example.com"'
    ])
  })

  it('refuses no names, no storage, and a renewal margin of 0 days', async (t) => {
    const { code, stderr, site } = await check(t, { secure: true, acme: { enabled: true, agreeToTerms: true, renewBeforeDays: 0 } })
    assert.equal(code, 1)
    const prefix = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      prefix + '/acme/renewBeforeDays: must be > 0 (got 0)',
      prefix + '/acme/names: no names to certify: set "domain", "sni" names or "acme.names"',
      prefix + '/acme/storageDirectory: automatic HTTPS keeps its account key and certificates on disk, so that a restart never orders again: set it, or "stateDirectory"'
    ])
  })

  it('refuses http-01 alone without the plain-HTTP server, and accepts it in a list or left to the default', async (t) => {
    const plainOff = { ...GOOD, disableNonEncryptedServer: true }
    const alone = await check(t, { ...plainOff, acme: { ...GOOD.acme, challenge: 'http-01' } })
    assert.equal(alone.code, 1)
    assert.deepEqual(alone.stderr.trimEnd().split('\n'), [
      alone.site.configFile + ': /acme/challenge: http-01 is the only challenge allowed, and it needs the plain-HTTP server on "port", which ' +
        '"disableNonEncryptedServer" turns off, so no certificate could ever be validated: add "tls-alpn-01" or use null'
    ])
    for (const challenge of [['http-01', 'tls-alpn-01'], null, 'tls-alpn-01']) {
      const good = await check(t, { ...plainOff, acme: { ...GOOD.acme, challenge } })
      assert.equal(good.code, 0, JSON.stringify(challenge) + ': ' + good.stderr)
    }
    for (const challenge of [[], ['http-01', 'http-01'], ['dns-02']]) {
      const bad = await check(t, { ...GOOD, acme: { ...GOOD.acme, challenge } })
      assert.deepEqual(bad.stderr.trimEnd().split('\n'), [bad.site.configFile + ': /acme/challenge: must be "http-01", "tls-alpn-01", "dns-01", a list of them, or null'], JSON.stringify(challenge))
    }
    const noDns = await check(t, { ...GOOD, acme: { ...GOOD.acme, challenge: ['dns-01'] } })
    assert.equal(noDns.stderr, noDns.site.configFile + ': /acme/challenge: dns-01 needs "acme.dns", which says how to put up the TXT records\n')
  })

  it('refuses a renewal margin that would renew every certificate the moment it is issued, and accepts 89 days', async (t) => {
    const storm = await check(t, { ...GOOD, acme: { ...GOOD.acme, renewBeforeDays: 100 } })
    assert.equal(storm.code, 1)
    assert.deepEqual(storm.stderr.trimEnd().split('\n'), [
      storm.site.configFile + ': /acme/renewBeforeDays: 100 days is not shorter than the 90-day lifetime of the longest ACME certificates, ' +
        'so every certificate would be due for renewal the moment it is issued; use null (renew when a third of the lifetime is left) or fewer days'
    ])
    const edge = await check(t, { ...GOOD, acme: { ...GOOD.acme, renewBeforeDays: 90 } })
    assert.equal(edge.code, 1)
    const long = await check(t, { ...GOOD, acme: { ...GOOD.acme, renewBeforeDays: 89 } })
    assert.equal(long.code, 0, long.stderr)
  })

  it('refuses a storage directory that cannot be written and a CA bundle without certificates', async (t) => {
    const site = await makeSite(t, {})
    await fs.writeFile(path.join(site.dir, 'a-file'), 'x')
    await fs.writeFile(path.join(site.dir, 'bundle.pem'), 'not a certificate\n')
    await site.writeConfig({ ...GOOD, acme: { ...GOOD.acme, storageDirectory: 'a-file/acme' } })
    const storage = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(storage.code, 1)
    assert.equal(storage.stderr, site.configFile + ': /acme/storageDirectory: ' + path.join(site.dir, 'a-file', 'acme') + ' is not a writable directory (ENOTDIR)\n')
    await site.writeConfig({ ...GOOD, acme: { ...GOOD.acme, caBundle: 'bundle.pem' } })
    const bundle = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(bundle.code, 1)
    assert.match(bundle.stderr, new RegExp('^' + site.configFile + ': /acme/caBundle: ' + path.join(site.dir, 'bundle.pem') + ' is not a readable PEM file of certificates \\('))
  })

  it('refuses a store key file that cannot be read and one that holds no 32-byte key', async (t) => {
    const site = await makeSite(t, {})
    const store = { url: 'redis://127.0.0.1:1', keyFile: 'store.key' }
    await site.writeConfig({ ...GOOD, store })
    const missing = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr, site.configFile + ': /store/keyFile: cannot read ' + path.join(site.dir, 'store.key') + ' (ENOENT)\n')
    await fs.writeFile(path.join(site.dir, 'store.key'), 'short\n', { mode: 0o600 })
    const short = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(short.code, 1)
    assert.match(short.stderr, /\/store\/keyFile: .*store\.key does not hold a 32-byte key/)
    await fs.writeFile(path.join(site.dir, 'store.key'), 'ab'.repeat(32) + '\n', { mode: 0o600 })
    const good = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(good.stderr, '')
    assert.equal(good.code, 0)
  })
})
