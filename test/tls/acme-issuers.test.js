'use strict'

// More than one CA (acme.issuers) and ACME profiles, against two Pebbles on
// loopback: an order falls to the second CA when the first refuses, each CA
// keeps its certificates in a folder of its own, a switch of CA serves the
// old certificate only until the new CA has issued, and a profile reaches
// the CA. Each Pebble makes its own intermediate at start, whose name tells
// the CAs apart. Pebble and its DNS are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { httpsRequest } = require('../helpers/tls')
const { skipWithout, requireTools } = require('../helpers/tools')
const { startPebble } = require('../helpers/pebble')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')
const { issuerKey } = require('../../lib/acme/issuers')

// The CA a served certificate comes from: Pebble's intermediate names itself "Pebble Intermediate CA <random>".
async function servedIssuer (port) {
  return (await handshake(port, NAME)).issuer
}

async function issuerOf (storage) {
  const pem = await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'), 'utf8')
  return new crypto.X509Certificate(pem).issuer.replace(/^CN=/, '')
}

describe('automatic HTTPS with several CAs and profiles', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('orders from the second CA when the first refuses the name, keeps it in that CA\'s folder and counts each CA', async (t) => {
    const { ports, pebble, site, storageRoot } = await setUp(t, { pebble: { blocked: [NAME] }, config: { metricsPath: '/metrics' } })
    const second = await startPebble(t, { httpPort: ports.http, tlsPort: ports.https })
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await site.writeConfig({
      ...config,
      acme: { ...config.acme, directoryUrl: undefined, issuers: [{ directoryUrl: pebble.directoryUrl }, { directoryUrl: second.directoryUrl }] }
    })
    const svr = await startSvr(t, site.configFile)
    const [first, fallback] = [issuerKey(pebble.directoryUrl), issuerKey(second.directoryUrl)]
    await svr.waitFor(new RegExp('acme: acme-test\\.example: ordering a certificate from ' + escape(pebble.directoryUrl) + ', then ' + escape(second.directoryUrl)), 20000)
    const refused = await svr.waitFor(new RegExp('acme: acme-test\\.example: ' + escape(pebble.directoryUrl) + ' failed: ([^\\n]*); trying ' + escape(second.directoryUrl)), 20000)
    assert.match(refused[1], /acme-test\.example/)
    await svr.waitFor(new RegExp('acme: acme-test\\.example: certificate issued by ' + escape(second.directoryUrl) + ', valid until'), 20000)
    const issued = await storedFingerprint(path.join(storageRoot, fallback))
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued)
    assert.equal(await fs.stat(path.join(storageRoot, first, 'certificates', NAME)).catch((err) => err.code), 'ENOENT')
    assert.equal(pebble.orders(), 1)
    assert.equal(second.orders(), 1)
    const metrics = (await httpsRequest(ports.https, '/metrics', { servername: NAME, headers: { host: NAME } })).body.split('\n')
    for (const line of [
      'svr_acme_orders_total{issuer="' + first + '",result="issued"} 0',
      'svr_acme_orders_total{issuer="' + first + '",result="failed"} 1',
      'svr_acme_orders_total{issuer="' + fallback + '",result="issued"} 1',
      'svr_acme_orders_total{issuer="' + fallback + '",result="failed"} 0'
    ]) assert.ok(metrics.includes(line), line + ' in\n' + metrics.filter((l) => l.startsWith('svr_acme')).join('\n'))
    assert.ok(metrics.some((line) => line.startsWith('svr_acme_certificate_expiry_timestamp_seconds{name="' + NAME + '",issuer="' + fallback + '"} ')))
  })

  it('after a switch of CA, serves the old CA\'s certificate until the new one has issued, then the new one\'s', async (t) => {
    const { ports, pebble, site, storageRoot } = await setUp(t, { standIn: false })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until/, 20000)
    const old = await issuerOf(path.join(storageRoot, issuerKey(pebble.directoryUrl)))
    await until(async () => (await servedIssuer(ports.https)) === old)

    const next = await startPebble(t, { httpPort: ports.http, tlsPort: ports.https })
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await site.writeConfig({ ...config, acme: { ...config.acme, directoryUrl: next.directoryUrl } })
    const from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(new RegExp('acme: acme-test\\.example: serving the certificate of ' + escape(issuerKey(pebble.directoryUrl)) +
      ', a CA no longer configured, until one is issued'), 20000, from)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until/, 20000, from)
    const renewed = await issuerOf(path.join(storageRoot, issuerKey(next.directoryUrl)))
    assert.notEqual(renewed, old)
    await until(async () => (await servedIssuer(ports.https)) === renewed)
    assert.equal(next.orders(), 1)
    // The old CA's certificate stays where it was, for a switch back.
    assert.equal(await issuerOf(path.join(storageRoot, issuerKey(pebble.directoryUrl))), old)
  })

  it('asks for the configured ACME profile, and says what to change when the CA has no such profile', async (t) => {
    const { site, storage } = await setUp(t, { pebble: { validity: 3600, profiles: { shortlived: 40 } }, acme: { profile: 'shortlived' } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until/, 20000)
    const cert = new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem')))
    // Pebble's notAfter is the last second of the period (notBefore + period - 1 s).
    assert.equal((Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 1000, 39)

    const unknown = await setUp(t, { acme: { profile: 'nope' } })
    const other = await startSvr(t, unknown.site.configFile)
    const failed = await other.waitFor(/acme: acme-test\.example: order failed \(attempt 1\): ([^\n]*); retrying/, 20000)
    assert.match(failed[1], /profile.*"nope" \(the CA does not offer this profile: set acme\.profile to one its directory lists under meta\.profiles, or null\)$/)
  })
})

function escape (text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
