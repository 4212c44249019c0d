'use strict'

// Automatic HTTPS with more than one challenge, against Pebble on loopback:
// when the CA cannot reach the plain-HTTP port (port 80 not forwarded, say),
// http-01 fails and tls-alpn-01 gets the certificate, and the next order
// tries tls-alpn-01 first. Pebble and its DNS are Go programs that .ci/run
// installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools, freePorts } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS challenge fallback', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('falls back from http-01 to tls-alpn-01 when the plain port is not reached, and starts with tls-alpn-01 next time', async (t) => {
    // Pebble validates http-01 on a port where nothing listens.
    const [nowhere] = await freePorts(1)
    const { ports, pebble, site, storage } = await setUp(t, { pebble: { validity: 15, httpPort: nowhere } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: ordering a certificate from \S+ \(http-01, then tls-alpn-01\)/, 20000)
    await svr.waitFor(/acme: acme-test\.example: http-01 failed: [^\n]+; trying tls-alpn-01\n[^]*acme: acme-test\.example: certificate issued/, 30000)
    const first = await storedFingerprint(storage)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === first)
    // One order per challenge tried.
    assert.equal(pebble.orders(), 2)
    const mark = svr.output.length
    await svr.waitFor(/acme: acme-test\.example: renewing a certificate from \S+ \(tls-alpn-01, then http-01\)\n[^]*acme: acme-test\.example: certificate issued/, 30000, mark)
    assert.equal(pebble.orders(), 3)
    assert.doesNotMatch(svr.output.slice(mark), /failed/)
    assert.notEqual(await storedFingerprint(storage), first)
  })
})
