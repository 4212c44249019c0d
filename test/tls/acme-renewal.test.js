'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: the renewal of a
// short-lived certificate, with no failed request. Pebble and its DNS are Go programs that .ci/run
// installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, tlsLoop, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS renewal', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('renews a short-lived certificate before it expires, with no failed request', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t, { pebble: { validity: 15 } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const first = await storedFingerprint(storage)
    const expiry = Date.parse(new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'))).validTo)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === first)
    const loop = tlsLoop(ports.https, NAME)
    // A third of 15 s left (5 s before it expires, jitter up to 1 s earlier),
    // or earlier at the time svr picks in Pebble's renewal window (ARI), which
    // spans the whole lifetime of so short a certificate: never before half
    // of it (7.5 s before expiry).
    const renewing = await svr.waitFor(/(\S+) info \[primary\] acme: acme-test\.example: renewing a certificate from /, 20000)
    const margin = expiry - Date.parse(renewing[1])
    assert.ok(margin > 4000 && margin <= 7600, 'renewed ' + margin + ' ms before expiry')
    await svr.waitFor(/acme: acme-test\.example: certificate issued[^\n]*\n[^]*acme: acme-test\.example: certificate issued/, 20000)
    const second = await storedFingerprint(storage)
    assert.notEqual(second, first)
    await until(() => loop.seen.includes(second))
    await loop.stop()
    assert.deepEqual(loop.failures, [])
    assert.deepEqual(loop.seen, [first, second])
    assert.equal(pebble.orders(), 2)
  })

  it('orders once per renewal over 60 s of 15 s certificates, never before half a lifetime', async (t) => {
    const { pebble, site } = await setUp(t, { pebble: { validity: 15 } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const start = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 60000))
    const issuedLines = () => [...svr.output.matchAll(/(\S+) info \[primary\] acme: acme-test\.example: certificate issued, valid until (\S+);/g)]
    // Every order gave a certificate: no order was placed twice for one
    // renewal. An order under way at the 60 s mark is waited for.
    await until(() => issuedLines().length === pebble.orders(), 15000).catch(() => {})
    const issued = issuedLines().map((match) => ({ at: Date.parse(match[1]), notAfter: Date.parse(match[2]) }))
    assert.equal(pebble.orders(), issued.length)
    const begun = [...svr.output.matchAll(/(\S+) info \[primary\] acme: acme-test\.example: renewing a certificate/g)].map((match) => Date.parse(match[1]))
    // Each renewal began after half the lifetime of the certificate before
    // it (15 s: at least 7.5 s later, less the clock's second of rounding),
    // and before that one expired. When the new one arrives is the CA's
    // matter: Pebble's validation and svr's polling of it took from 0.3 to
    // 6 s on a loaded machine.
    for (let i = 1; i < issued.length; i++) {
      const start = begun.filter((at) => at <= issued[i].at).pop()
      assert.ok(start !== undefined && start >= issued[i - 1].at, 'renewal ' + i + ' began after the certificate before was issued')
      const gap = start - issued[i - 1].at
      assert.ok(gap >= 6500, 'renewal began ' + gap + ' ms after the certificate before was issued')
      assert.ok(start <= issued[i - 1].notAfter, 'renewal began ' + (start - issued[i - 1].notAfter) + ' ms after the certificate before expired')
    }
    const renewals = issued.filter(({ at }) => at > start).length
    assert.ok(renewals >= 4 && renewals <= 9, renewals + ' renewals in 60 s')
  })
})
