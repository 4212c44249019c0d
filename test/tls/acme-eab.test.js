'use strict'

// External Account Binding against Pebble in its EAB mode, on loopback: an
// account bound with the key id and HMAC key the CA gave gets its
// certificate; without a binding, or with a wrong key, the failure says what
// to set. Pebble and its DNS are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr, runSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

const KEY_ID = 'svr-test-kid'
const HMAC_KEY = crypto.randomBytes(32).toString('base64url')

async function eabSite (t, eab) {
  const setup = await setUp(t, { pebble: { eab: { [KEY_ID]: HMAC_KEY } }, acme: { eab } })
  return setup
}

describe('automatic HTTPS with External Account Binding', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('gets a certificate from a CA that requires a binding, with the key read from its file', async (t) => {
    const { ports, site, storage, pebble } = await eabSite(t, { keyId: KEY_ID, hmacKeyFile: 'eab.key' })
    await fs.writeFile(path.join(site.dir, 'eab.key'), HMAC_KEY + '\n', { mode: 0o600 })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const issued = await storedFingerprint(storage)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued)
    assert.equal(pebble.orders(), 1)
    assert.doesNotMatch(svr.output, new RegExp(HMAC_KEY))
  })

  it('says the CA requires a binding when none is set, and that it refused one with a wrong key', async (t) => {
    const without = await eabSite(t, null)
    const svr = await startSvr(t, without.site.configFile)
    const line = await svr.waitFor(/acme: acme-test\.example: order failed \(attempt 1\): ([^\n]*); retrying/, 20000)
    assert.match(line[1], /\(the CA requires External Account Binding: set acme\.eab to the key id and HMAC key it gave\)$/)

    const wrong = await eabSite(t, { keyId: KEY_ID, hmacKeyFile: 'eab.key' })
    await fs.writeFile(path.join(wrong.site.dir, 'eab.key'), crypto.randomBytes(32).toString('base64url'))
    const other = await startSvr(t, wrong.site.configFile)
    const refused = await other.waitFor(/acme: acme-test\.example: order failed \(attempt 1\): ([^\n]*); retrying/, 20000)
    assert.match(refused[1], /\(the CA refused the External Account Binding: check acme\.eab\.keyId and the key in acme\.eab\.hmacKeyFile\)$/)
  })

  it('refuses, with --check-config, a key file that cannot be read or holds no key', async (t) => {
    const { site } = await eabSite(t, { keyId: KEY_ID, hmacKeyFile: 'eab.key' })
    const missing = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr.trim(), site.configFile + ': /acme/eab/hmacKeyFile: ' + path.join(site.dir, 'eab.key') + ' cannot be read (ENOENT)')
    await fs.writeFile(path.join(site.dir, 'eab.key'), 'not a key!')
    const bad = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(bad.stderr.trim(), site.configFile + ': /acme/eab/hmacKeyFile: ' + path.join(site.dir, 'eab.key') +
      ' does not hold the base64url HMAC key of at least 16 bytes that the CA gave')
  })
})
