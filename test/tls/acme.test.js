'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on
// loopback: Pebble's validation authority really fetches the http-01 token
// from svr's plain port, and what svr serves afterwards is the certificate
// Pebble issued. Pebble and its DNS are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tls = require('node:tls')
const { makeSite, startSvr } = require('../helpers/server')
const { makeCertificate, httpsRequest } = require('../helpers/tls')
const { request } = require('../helpers/http')
const { skipWithout, requireTools, freePorts } = require('../helpers/tools')
const { startPebble, acmeSettings } = require('../helpers/pebble')

const NAME = 'acme-test.example'
const TOOLS = ['pebble', 'pebble-challtestsrv']

/**
 * A secure site on two fixed free ports (Pebble must be told them), its
 * ACME storage under stateDirectory, and a Pebble validating against it.
 */
async function setUp (t, { pebble: pebbleOptions = {}, acme = {}, config = {}, standIn = true } = {}) {
  // Two more for a second instance.
  const [http, https, secondHttp, secondHttps] = await freePorts(4)
  const ports = { http, https, secondHttp, secondHttps }
  const pebble = await startPebble(t, { httpPort: ports.http, tlsPort: ports.https, ...pebbleOptions })
  const site = await makeSite(t, {}, { 'index.html': 'hello\n' })
  const values = {
    port: '127.0.0.1:' + ports.http,
    sport: '127.0.0.1:' + ports.https,
    secure: true,
    domain: NAME,
    stateDirectory: 'state',
    acme: acmeSettings(pebble, acme),
    ...config
  }
  // The stand-in served for the name until its certificate arrives.
  let standInFingerprint = null
  if (standIn) {
    const { cert, key, fingerprint } = await makeCertificate(site.dir, 'stand-in', ['stand-in.example'])
    Object.assign(values, { cert, key })
    standInFingerprint = fingerprint
  }
  await site.writeConfig(values)
  return { ports, pebble, site, storage: path.join(site.dir, 'state', 'acme'), standIn: standInFingerprint }
}

/**
 * One TLS handshake for a name on a new connection.
 * @returns {Promise<{fingerprint: string, issuer: string, subjectAltName: string}>}
 */
function handshake (port, servername, options = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...options }, () => {
      const peer = socket.getPeerCertificate()
      resolve({ fingerprint: peer.fingerprint256, issuer: peer.issuer.CN, subjectAltName: peer.subjectaltname, authorized: socket.authorized, protocol: socket.alpnProtocol })
      socket.end()
    })
    socket.on('error', reject)
  })
}

/**
 * HTTPS requests for the name on new connections until stopped: every
 * failure, and the certificates seen in order.
 */
function tlsLoop (port, servername) {
  const seen = []
  const failures = []
  let running = true
  const done = (async () => {
    while (running) {
      try {
        const res = await httpsRequest(port, '/index.html', { servername, headers: { host: servername } })
        if (res.status !== 200 || res.body !== 'hello\n') failures.push('status ' + res.status)
        if (seen[seen.length - 1] !== res.fingerprint) seen.push(res.fingerprint)
      } catch (err) {
        failures.push(err.code || err.message)
      }
    }
  })()
  return { seen, failures, stop: async () => { running = false; await done } }
}

async function storedFingerprint (storage) {
  const pem = await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'), 'utf8')
  return new crypto.X509Certificate(pem).fingerprint256
}

async function until (condition, timeout = 30000) {
  const deadline = Date.now() + timeout
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within ' + timeout + ' ms')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('automatic HTTPS against Pebble', { skip: skipWithout(...TOOLS) }, () => {
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
    assert.equal(pebble.orders(), 1)
    const notAfter = Date.parse(new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'))).validTo)
    const metrics = (await httpsRequest(ports.https, '/metrics', { servername: NAME, headers: { host: NAME } })).body.split('\n')
    assert.ok(metrics.includes('svr_acme_certificate_expiry_timestamp_seconds{name="acme-test.example"} ' + notAfter / 1000), metrics.join('\n'))
    assert.ok(metrics.includes('svr_acme_orders_total{result="issued"} 1'))
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

  it('obtains a certificate over tls-alpn-01 on the HTTP/2 server without a plain port, with no failed request across the switch', async (t) => {
    const { ports, pebble, site, storage, standIn } = await setUp(t, {
      acme: { challenge: 'tls-alpn-01' },
      config: { enableHTTP2: true, disableNonEncryptedServer: true }
    })
    const svr = await startSvr(t, site.configFile)
    const loop = tlsLoop(ports.https, NAME)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until \S+; serving it/, 20000)
    const issued = await storedFingerprint(storage)
    await until(() => loop.seen.includes(issued))
    await loop.stop()
    assert.deepEqual(loop.failures, [])
    assert.deepEqual(loop.seen, [standIn, issued])
    assert.equal(pebble.orders(), 1)
    assert.doesNotMatch(svr.output, /acme-challenge/)
    // Browsers still get HTTP/2; acme-tls/1 without an open challenge gets the default certificate.
    const browser = await handshake(ports.https, NAME, { ALPNProtocols: ['h2', 'http/1.1'] })
    assert.equal(browser.protocol, 'h2')
    assert.equal(browser.fingerprint, issued)
    assert.equal((await handshake(ports.https, NAME, { ALPNProtocols: ['acme-tls/1'] })).fingerprint, standIn)
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

  it('renews a short-lived certificate before it expires, with no failed request', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t, { pebble: { validity: 15 } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const first = await storedFingerprint(storage)
    const expiry = Date.parse(new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'))).validTo)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === first)
    const loop = tlsLoop(ports.https, NAME)
    // A third of 15 s left: renewed about 10 s after it was issued, 5 s
    // before it expires (jitter makes it up to 1 s earlier).
    const renewing = await svr.waitFor(/(\S+) info \[primary\] acme: acme-test\.example: renewing a certificate from /, 20000)
    const margin = expiry - Date.parse(renewing[1])
    assert.ok(margin > 4000 && margin <= 6100, 'renewed ' + margin + ' ms before expiry')
    await svr.waitFor(/acme: acme-test\.example: certificate issued[^\n]*\n[^]*acme: acme-test\.example: certificate issued/, 20000)
    const second = await storedFingerprint(storage)
    assert.notEqual(second, first)
    await until(() => loop.seen.includes(second))
    await loop.stop()
    assert.deepEqual(loop.failures, [])
    assert.deepEqual(loop.seen, [first, second])
    assert.equal(pebble.orders(), 2)
  })

  it('keeps serving the old certificate while the CA is unreachable, retries with back-off, and renews once it is back', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t, { pebble: { validity: 12 } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    const first = await storedFingerprint(storage)
    await pebble.stopCa()
    const failure = /acme: acme-test\.example: order failed \(attempt (\d)\): [^\n]*ECONNREFUSED[^\n]*; retrying in (\d+) s; the current certificate keeps serving/g
    await svr.waitFor(/order failed \(attempt 2\)/, 30000)
    const attempts = [...svr.output.matchAll(failure)].map((match) => [match[1], match[2]])
    assert.deepEqual(attempts.slice(0, 2), [['1', '1'], ['2', '2']], svr.output)
    const during = await httpsRequest(ports.https, '/index.html', { servername: NAME, headers: { host: NAME } })
    assert.equal(during.status, 200)
    assert.equal(during.fingerprint, first)
    await pebble.start()
    await svr.waitFor(/acme: acme-test\.example: certificate issued[^\n]*\n[^]*acme: acme-test\.example: certificate issued/, 20000)
    assert.equal(svr.exitInfo, null)
  })

  it('logs what the CA refuses, serves the stand-in meanwhile, and shows the failure in the metrics and on the status page', async (t) => {
    const { ports, site } = await setUp(t, {
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
    for (const line of [
      'svr_acme_certificate_expiry_timestamp_seconds{name="blocked.example"} 0',
      'svr_acme_orders_total{result="issued"} 0',
      'svr_acme_orders_total{result="failed"} 1',
      'svr_acme_failures{name="blocked.example"} 1'
    ]) assert.ok(metrics.includes(line), line)
    const status = await get('/svrjsstatus.svr')
    assert.equal(status.status, 200)
    const row = status.body.match(/<table id="certificates">.*?<tbody><tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>in \d/)
    assert.ok(row, status.body)
    assert.deepEqual(row.slice(1, 4), ['blocked.example', 'none yet', '1'])
    assert.match(row[4], /blocked\.example/)
  })

  it('fails the handshake for a name without a certificate when there is no default one', async (t) => {
    const { ports, site } = await setUp(t, { standIn: false, acme: { names: ['blocked.example'] }, pebble: { blocked: ['blocked.example'] } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: blocked\.example: no certificate yet; ordering one/)
    await assert.rejects(handshake(ports.https, 'blocked.example'), /alert|handshake|socket hang up|ECONNRESET/)
  })

  it('orders once for two instances sharing one storage directory', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t)
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
      acme: { ...config.acme, storageDirectory: storage }
    })
    const [a, b] = await Promise.all([startSvr(t, site.configFile), startSvr(t, second.configFile)])
    await Promise.any([a, b].map((svr) => svr.waitFor(/certificate issued/, 20000)))
    const issued = await storedFingerprint(storage)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued &&
      (await handshake(secondHttps, NAME)).fingerprint === issued)
    assert.equal(pebble.orders(), 1)
    const waited = [a, b].filter((svr) => /is ordering it \(lock until/.test(svr.output))
    assert.equal(waited.length, 1)
    await waited[0].waitFor(/picked up the certificate in storage/)
    assert.deepEqual(await fs.readdir(path.join(storage, 'locks')), [])
  })
})
