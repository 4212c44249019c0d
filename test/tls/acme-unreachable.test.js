'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: a CA that goes away
// while a certificate is due, and comes back. Pebble and its DNS are Go programs that .ci/run
// installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const { startSvr } = require('../helpers/server')
const { httpsRequest } = require('../helpers/tls')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, storedFingerprint } = require('../helpers/acme')

describe('automatic HTTPS with the CA unreachable', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

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
})
