'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: a CA that refuses, a
// name without any certificate, and two instances sharing one storage directory. Pebble and its DNS
// are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { httpsRequest } = require('../helpers/tls')
const { skipWithout, requireTools } = require('../helpers/tools')
const { issuerKey } = require('../../lib/acme/issuers')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS failures and fleets', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('logs what the CA refuses, serves the stand-in meanwhile, and shows the failure in the metrics and on the status page', async (t) => {
    const { ports, pebble, site } = await setUp(t, {
      pebble: { blocked: ['blocked.example'] },
      acme: { names: ['blocked.example'], retryDelay: 60000 },
      config: { metricsPath: '/metrics' }
    })
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    const match = await svr.waitFor(/acme: blocked\.example: order failed \(attempt 1\): ([^\n]*); retrying in 60 s\n/, 20000)
    assert.match(match[1], /blocked\.example/)
    assert.match(match[1], /policy/)
    const get = (target) => httpsRequest(ports.https, target, { servername: 'blocked.example', headers: { host: 'blocked.example' } })
    const res = await get('/index.html')
    assert.equal(res.status, 200)
    const metrics = (await get('/metrics')).body.split('\n')
    const issuer = issuerKey(pebble.directoryUrl)
    for (const line of [
      'svr_acme_certificate_expiry_timestamp_seconds{name="blocked.example",issuer=""} 0',
      'svr_acme_orders_total{issuer="' + issuer + '",result="issued"} 0',
      'svr_acme_orders_total{issuer="' + issuer + '",result="failed"} 1',
      'svr_acme_failures{name="blocked.example"} 1'
    ]) assert.ok(metrics.includes(line), line)
    const status = await get('/svrjsstatus.svr')
    assert.equal(status.status, 200)
    const row = status.body.match(/<table id="certificates">.*?<tbody><tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>in \d/)
    assert.ok(row, status.body)
    assert.deepEqual(row.slice(1, 4), ['blocked.example', 'none yet', '1'])
    assert.match(row[4], /blocked\.example/)
  })

  it('says that the CA\'s certificate does not verify, and names acme.caBundle, rather than calling the CA unreachable', async (t) => {
    const { site } = await setUp(t, { acme: { caBundle: null } })
    const svr = await startSvr(t, site.configFile)
    const line = await svr.waitFor(/acme: acme-test\.example: order failed \(attempt 1\): ([^\n]*); retrying in 1 s/, 20000)
    assert.equal(line[1], 'the CA\'s HTTPS certificate does not verify (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate): ' +
      'a CA with a private root (a test or in-house CA) needs its root certificate in the PEM file named by acme.caBundle')
    // Another challenge would meet the same certificate.
    assert.doesNotMatch(svr.output, /trying tls-alpn-01|cannot reach the CA/)
  })

  it('fails the handshake for a name without a certificate when there is no default one', async (t) => {
    const { ports, site } = await setUp(t, { standIn: false, acme: { names: ['blocked.example'] }, pebble: { blocked: ['blocked.example'] } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: blocked\.example: no certificate yet; ordering one/)
    await assert.rejects(handshake(ports.https, 'blocked.example'), /alert|handshake|socket hang up|ECONNRESET/)
  })

  it('orders once for two instances sharing one storage directory', async (t) => {
    // Either instance may order before the other one even listens: Pebble
    // validates on whichever listens, as through a load balancer in front
    // of both, and each answers the other's challenges from the storage.
    const { ports, pebble, site, storage, storageRoot } = await setUp(t, { fleet: true })
    // The second instance: other ports, same storage (as behind a load balancer, with a shared volume).
    const second = await makeSite(t, {}, { 'index.html': 'hello\n' })
    const secondHttps = ports.secondHttps
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await second.writeConfig({
      ...config,
      wwwroot: site.webroot,
      port: '127.0.0.1:' + ports.secondHttp,
      sport: '127.0.0.1:' + secondHttps,
      stateDirectory: null,
      acme: { ...config.acme, storageDirectory: storageRoot }
    })
    const [a, b] = await Promise.all([startSvr(t, site.configFile), startSvr(t, second.configFile)])
    await Promise.any([a, b].map((svr) => svr.waitFor(/certificate issued/, 20000)))
    const issued = await storedFingerprint(storage)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued &&
      (await handshake(secondHttps, NAME)).fingerprint === issued)
    // One instance orders; on a loaded machine a validation may time out and
    // that instance orders again, but the other never orders at all.
    const ordering = [a, b].map((svr) => (svr.output.match(/: ordering a certificate from /g) || []).length)
    assert.equal(ordering.filter((count) => count !== 0).length, 1)
    assert.equal(pebble.orders(), ordering[0] + ordering[1])
    // The other one found the order under way and waited on its lock, or,
    // when it looked after the order was done, found the certificate stored.
    const other = ordering[0] === 0 ? a : b
    if (/is ordering it \(lock until/.test(other.output)) await other.waitFor(/picked up the certificate in storage/)
    await until(async () => (await fs.readdir(path.join(storage, 'locks'))).length === 0)
  })
})
