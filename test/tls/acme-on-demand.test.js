'use strict'

// Certificates on demand against Pebble on loopback: a name no configuration
// lists gets its certificate at its first handshake when the `ask` endpoint
// (a server in this test) allows it; a refused one gets a TLS alert and no
// order; a burst of handshakes for one new name makes one order; `allow`
// patterns and the rate of new names refuse the rest. Pebble and its DNS
// (every name is 127.0.0.1) are Go programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint } = require('../helpers/acme')

// An `ask` endpoint that allows the names in `allowed`, and counts what it is asked.
async function askServer (t, allowed) {
  const asked = []
  const server = http.createServer((req, res) => {
    const name = new URL(req.url, 'http://x').searchParams.get('domain')
    asked.push(name)
    res.writeHead(allowed.has(name) ? 200 : 403).end()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  return { url: 'http://127.0.0.1:' + server.address().port + '/check', asked }
}

async function onDemandSite (t, onDemand) {
  const setup = await setUp(t, { acme: { names: [NAME], onDemand } })
  const svr = await startSvr(t, setup.site.configFile)
  await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
  return { ...setup, svr }
}

// Node cannot send an alert from its SNI callback: a refused handshake is
// closed before the server's hello, with no certificate.
const REFUSED = /alert|socket disconnected before secure TLS connection was established|ECONNRESET/

describe('automatic HTTPS on demand', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('orders at the first handshake for a name the ask endpoint allows, and refuses another with an alert and no order', async (t) => {
    const ask = await askServer(t, new Set(['customer.example']))
    const { ports, pebble, storage, svr } = await onDemandSite(t, { ask: ask.url })
    assert.equal(pebble.orders(), 1)

    const served = await handshake(ports.https, 'customer.example')
    assert.equal(served.fingerprint, await storedFingerprint(storage, 'customer.example'))
    assert.equal(served.subjectAltName, 'DNS:customer.example')
    assert.equal(pebble.orders(), 2)
    // Served from then on without asking again.
    assert.equal((await handshake(ports.https, 'customer.example')).fingerprint, served.fingerprint)
    assert.deepEqual(ask.asked, ['customer.example'])

    await assert.rejects(handshake(ports.https, 'stranger.example'), REFUSED)
    await assert.rejects(handshake(ports.https, 'stranger.example'), REFUSED)
    assert.equal(pebble.orders(), 2)
    // Asked once: a refusal is remembered for a minute.
    assert.deepEqual(ask.asked, ['customer.example', 'stranger.example'])
    assert.match(svr.output, /acme: stranger\.example: no certificate on demand: acme\.onDemand\.ask answered 403\n/)
  })

  it('makes one order for 50 concurrent handshakes for one new name, and every one gets the certificate', async (t) => {
    const ask = await askServer(t, new Set(['burst.example']))
    const { ports, pebble, storage } = await onDemandSite(t, { ask: ask.url })
    const results = await Promise.all(Array.from({ length: 50 }, () => handshake(ports.https, 'burst.example')))
    const issued = await storedFingerprint(storage, 'burst.example')
    assert.deepEqual(new Set(results.map((result) => result.fingerprint)), new Set([issued]))
    assert.equal(pebble.orders(), 2)
    assert.deepEqual(ask.asked, ['burst.example'])
  })

  it('asks again before renewing, and stops renewing a name the ask endpoint no longer allows', async (t) => {
    const allowed = new Set(['staying.example', 'leaving.example'])
    const ask = await askServer(t, allowed)
    const setup = await setUp(t, { pebble: { validity: 15 }, acme: { names: [NAME], onDemand: { ask: ask.url } } })
    const svr = await startSvr(t, setup.site.configFile)
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 20000)
    await handshake(setup.ports.https, 'staying.example')
    await handshake(setup.ports.https, 'leaving.example')
    allowed.delete('leaving.example')
    await svr.waitFor(/acme: leaving\.example: not renewing the certificate got on demand: acme\.onDemand\.ask answered 403; it serves until it expires/, 20000)
    await svr.waitFor(/acme: staying\.example: renewing a certificate from /, 20000)
    assert.doesNotMatch(svr.output, /acme: leaving\.example: renewing/)
    assert.equal(ask.asked.filter((name) => name === 'leaving.example').length, 2)
  })

  it('refuses names outside acme.onDemand.allow and past maxNewNamesPerMinute, without ordering', async (t) => {
    const { ports, pebble, storage, svr } = await onDemandSite(t, { allow: ['*.shop.example'], maxNewNamesPerMinute: 1 })
    const first = await handshake(ports.https, 'a.shop.example')
    assert.equal(first.fingerprint, await storedFingerprint(storage, 'a.shop.example'))
    await assert.rejects(handshake(ports.https, 'b.shop.example'), REFUSED)
    assert.match(svr.output, /acme: b\.shop\.example: no certificate on demand: already 1 new names in the last minute \(acme\.onDemand\.maxNewNamesPerMinute\)/)
    await assert.rejects(handshake(ports.https, 'elsewhere.example'), REFUSED)
    await assert.rejects(handshake(ports.https, 'a.b.shop.example'), REFUSED)
    assert.equal(pebble.orders(), 2)
  })
})
