'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: Pebble's validation
// authority really fetches the http-01 token from svr's plain port, and what svr serves afterwards is
// the certificate Pebble issued. Pebble and its DNS are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { httpsRequest } = require('../helpers/tls')
const { request } = require('../helpers/http')
const { skipWithout, requireTools } = require('../helpers/tools')
const { issuerKey } = require('../../lib/acme/issuers')
const { NAME, TOOLS, setUp, handshake, tlsLoop, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS over http-01', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('obtains a certificate over http-01 and every worker serves it, with no failed request across the switch', async (t) => {
    const { ports, pebble, site, storage, standIn } = await setUp(t, { config: { metricsPath: '/metrics' } })
    const svr = await startSvr(t, site.configFile)
    const loop = tlsLoop(ports.https, NAME)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until \S+; serving it/, 20000)
    const issued = await storedFingerprint(storage)
    await until(() => loop.seen.includes(issued))
    // Enough handshakes after the switch to reach both workers.
    for (let i = 0; i < 20; i++) assert.equal((await handshake(ports.https, NAME)).fingerprint, issued)
    await loop.stop()
    assert.deepEqual(loop.failures, [])
    assert.equal(loop.seen[loop.seen.length - 1], issued)
    assert.ok(loop.seen.every((fingerprint) => fingerprint === standIn || fingerprint === issued), 'only the stand-in, then the issued certificate')
    const served = await handshake(ports.https, NAME)
    assert.match(served.issuer, /^Pebble Intermediate CA /)
    assert.equal(served.subjectAltName, 'DNS:' + NAME)
    assert.equal(pebble.orders(), 1, 'one order; svr said:\n' + svr.output.split('\n').filter((line) => /acme:|up \(pid/.test(line)).join('\n'))
    const notAfter = Date.parse(new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'))).validTo)
    const metrics = (await httpsRequest(ports.https, '/metrics', { servername: NAME, headers: { host: NAME } })).body.split('\n')
    const issuer = issuerKey(pebble.directoryUrl)
    assert.ok(metrics.includes('svr_acme_certificate_expiry_timestamp_seconds{name="acme-test.example",issuer="' + issuer + '"} ' + notAfter / 1000), metrics.join('\n'))
    assert.ok(metrics.includes('svr_acme_orders_total{issuer="' + issuer + '",result="issued"} 1'))
    // Keys readable by the service user only.
    for (const file of ['account.key', 'certificates/' + NAME + '/key.pem', 'certificates/' + NAME + '/cert.pem']) {
      assert.equal((await fs.stat(path.join(storage, file))).mode & 0o777, 0o600, file)
    }
    assert.doesNotMatch(svr.output, /BEGIN|PRIVATE KEY/)
    // Other names keep the stand-in.
    assert.equal((await handshake(ports.https, 'other.example')).fingerprint, standIn)

    // A restart loads it from storage and orders nothing.
    await svr.kill()
    const again = await startSvr(t, site.configFile)
    await again.waitFor(/acme: acme-test\.example: certificate loaded from storage, valid until /)
    assert.equal((await handshake(ports.https, NAME)).fingerprint, issued)
    assert.equal(pebble.orders(), 1)
    assert.doesNotMatch(again.output, /ordering a certificate/)

    // Nor does a reload: its new workers get the certificate from the coordinator.
    const mark = again.output.length
    again.signal('SIGHUP')
    await again.waitFor(/reload applied/, 20000, mark)
    for (let i = 0; i < 10; i++) assert.equal((await handshake(ports.https, NAME)).fingerprint, issued)
    assert.equal(pebble.orders(), 1)
  })

  it('lets the CA validate only once a worker listens, however long the workers take to boot', async (t) => {
    const { site, pebble, storage } = await setUp(t, { config: { serverSideScriptFormat: 'module' } })
    // Application code that takes 2 s to load: the workers listen that much
    // later, while Pebble answers the order in milliseconds.
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'),
      'const until = Date.now() + 2000\nwhile (Date.now() < until) {}\nmodule.exports = (req, res, next) => next()\n')
    const svr = await startSvr(t, site.configFile, { timeout: 20000 })
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const acme = svr.output.split('\n').filter((line) => /acme:|up \(pid/.test(line)).join('\n')
    assert.doesNotMatch(svr.output, /order failed/, acme)
    assert.equal(pebble.orders(), 1, acme)
    assert.ok(svr.output.indexOf(' up (pid ') < svr.output.indexOf('ordering a certificate'), 'ordered after a worker listened:\n' + acme)
    await storedFingerprint(storage)
  })

  it('answers http-01 tokens before forced HTTPS, auth on every path and forbidden dot paths', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t, {
      config: {
        users: [],
        nonStandardCodes: [
          { scode: 403, regex: '/^\\/\\./' },
          { scode: 401, regex: '/^\\//', disableBruteProtection: true }
        ]
      }
    })
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    assert.equal((await handshake(ports.https, NAME)).fingerprint, await storedFingerprint(storage))
    assert.equal(pebble.orders(), 1)
    // The rules do hold for everything else on the plain port, and an unknown token is a plain 404.
    const unknown = await request(ports.http, '/.well-known/acme-challenge/no-such-token', { headers: { host: NAME } })
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body, 'no such challenge\n')
    const other = await request(ports.http, '/.well-known/other', { headers: { host: NAME } })
    assert.equal(other.status, 301)
    assert.equal(other.headers.location, 'https://' + NAME + '/.well-known/other')
  })
})
