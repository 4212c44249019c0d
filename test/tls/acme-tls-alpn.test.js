'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: Pebble's validation
// authority really connects with acme-tls/1 to svr's HTTPS port. Pebble and its DNS are Go programs
// that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, tlsLoop, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS over tls-alpn-01', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

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
    // The stand-in until the switch, then the issued certificate; a CA that
    // issues before the loop's first handshake leaves only the latter to see.
    assert.deepEqual(loop.seen[0] === standIn ? loop.seen : [standIn, ...loop.seen], [standIn, issued])
    assert.equal(pebble.orders(), 1)
    assert.doesNotMatch(svr.output, /acme-challenge/)
    // Browsers still get HTTP/2; acme-tls/1 without an open challenge gets the default certificate.
    const browser = await handshake(ports.https, NAME, { ALPNProtocols: ['h2', 'http/1.1'] })
    assert.equal(browser.protocol, 'h2')
    assert.equal(browser.fingerprint, issued)
    assert.equal((await handshake(ports.https, NAME, { ALPNProtocols: ['acme-tls/1'] })).fingerprint, standIn)
  })
})
