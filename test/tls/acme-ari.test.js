'use strict'

// ACME Renewal Information (RFC 9773) against Pebble on loopback: a CA that
// moves a certificate's renewal window into the past (as for a revoked one)
// gets it replaced at once; one that gives the ordinary window gets no early
// order. Pebble and its DNS are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const https = require('node:https')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

// Pebble's management interface: the renewal information it gives for one certificate.
async function setRenewalInfo (pebble, certificate, info) {
  const body = JSON.stringify({ Certificate: certificate, ARIResponse: JSON.stringify(info) })
  const ca = await fs.readFile(pebble.caBundle)
  const status = await new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: pebble.ports.management, path: '/set-renewal-info/', method: 'POST', ca, servername: 'localhost', headers: { 'user-agent': 'svr-test' } },
      (res) => {
        let text = ''
        res.on('data', (chunk) => { text += chunk })
        res.on('end', () => resolve(res.statusCode === 200 ? 200 : res.statusCode + ' ' + text))
      })
    req.on('error', reject)
    req.end(body)
  })
  assert.equal(status, 200)
}

describe('automatic HTTPS with the CA\'s renewal information', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('replaces a certificate at once when the CA\'s renewal window has passed, and not before when it has not', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t)
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until \S+; serving it/, 20000)
    const first = await storedFingerprint(storage)
    const pem = await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'), 'utf8')
    await svr.kill()

    // Pebble's own window for an hour-long certificate spans its lifetime:
    // a restart asks for it, and orders nothing.
    const calm = await startSvr(t, site.configFile)
    await calm.waitFor(/acme: acme-test\.example: certificate loaded from storage/)
    await until(() => /GET \/draft-ietf-acme-ari-03\/renewalInfo\/ /.test(pebble.server.output), 10000)
    await calm.kill()
    assert.equal(pebble.orders(), 1)
    assert.doesNotMatch(calm.output, /replaced now|renewing a certificate/)

    const past = Date.now() - 60 * 60 * 1000
    await setRenewalInfo(pebble, pem, { suggestedWindow: { start: new Date(past).toISOString(), end: new Date(past + 1000).toISOString() } })
    const svrAgain = await startSvr(t, site.configFile)
    await svrAgain.waitFor(/acme: acme-test\.example: the CA asks for this certificate to be replaced now \(its renewal window \S+ to \S+ has passed/, 20000)
    await svrAgain.waitFor(/acme: acme-test\.example: renewing a certificate from [^\n]*\n[^]*acme: acme-test\.example: certificate issued/, 20000)
    const second = await storedFingerprint(storage)
    assert.notEqual(second, first)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === second)
    assert.equal(pebble.orders(), 2)
  })
})
