'use strict'

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const { webcrypto } = require('node:crypto')
const x509 = require('@peculiar/x509')
const { certificateId, suggestedWindow, renewalWithin, recheckDelay, RenewalWindows, RECHECK_DEFAULT_MS, RECHECK_MIN_MS, RECHECK_MAX_MS } = require('../../lib/acme/ari')

const HOUR = 60 * 60 * 1000

// A certificate with the Authority Key Identifier and serial number of the
// example in RFC 9773, section 4.1.
async function rfcExampleCertificate () {
  x509.cryptoProvider.set(webcrypto)
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = await webcrypto.subtle.generateKey(alg, false, ['sign', 'verify'])
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '0087654321',
    name: 'CN=ari.example',
    notBefore: new Date('2026-01-01T00:00:00Z'),
    notAfter: new Date('2026-04-01T00:00:00Z'),
    keys,
    signingAlgorithm: alg,
    extensions: [new x509.AuthorityKeyIdentifierExtension('69885b6b87464041e1b37b847ba0ae2cde01c8d4')]
  })
  return { withAki: cert.toString('pem'), without: await plainCertificate(keys, alg) }
}

async function plainCertificate (keys, alg) {
  const cert = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name: 'CN=plain.example', keys, signingAlgorithm: alg })
  return cert.toString('pem')
}

describe('ACME renewal information (RFC 9773)', () => {
  let pems
  before(async () => { pems = await rfcExampleCertificate() })

  it('should name a certificate as RFC 9773 does: its key identifier and serial, base64url', () => {
    assert.equal(certificateId(pems.withAki), 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE')
    assert.equal(certificateId(pems.without), null)
  })

  it('should take a suggested window only when both ends are dates and the end is later', () => {
    assert.deepEqual(suggestedWindow({ suggestedWindow: { start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:00Z' } }),
      { start: Date.UTC(2026, 2, 1), end: Date.UTC(2026, 2, 3) })
    for (const body of [null, 'x', {}, { suggestedWindow: null }, { suggestedWindow: { start: 'soon', end: '2026-03-03T00:00:00Z' } },
      { suggestedWindow: { start: '2026-03-03T00:00:00Z', end: '2026-03-03T00:00:00Z' } }]) {
      assert.equal(suggestedWindow(body), null, JSON.stringify(body))
    }
  })

  it('should pick a time in the window, never before half the lifetime, and now once the whole window has passed', () => {
    const cert = { notBefore: 0, notAfter: 90 * 24 * HOUR }
    const narrow = { start: 60 * 24 * HOUR, end: 62 * 24 * HOUR }
    assert.equal(renewalWithin(narrow, cert, 0, 0), narrow.start)
    assert.equal(renewalWithin(narrow, cert, 0, 0.5), 61 * 24 * HOUR)
    // Begun: a point in it that has passed is now.
    assert.equal(renewalWithin(narrow, cert, 61 * 24 * HOUR, 0.25), 61 * 24 * HOUR)
    // As wide as the lifetime: from half of it.
    assert.equal(renewalWithin({ start: 0, end: cert.notAfter }, cert, 1000, 0), 45 * 24 * HOUR)
    // Passed (a revoked certificate): now, whatever the lifetime.
    assert.equal(renewalWithin({ start: 10, end: 20 }, cert, 5000, 0.9), 5000)
  })

  it('should wait as Retry-After says, within a minute and a day, and 6 hours without it', () => {
    const now = Date.UTC(2026, 0, 1)
    assert.equal(recheckDelay('21600', now), 6 * HOUR)
    assert.equal(recheckDelay(new Date(now + 2 * HOUR).toUTCString(), now), 2 * HOUR)
    assert.equal(recheckDelay('1', now), RECHECK_MIN_MS)
    assert.equal(recheckDelay('999999', now), RECHECK_MAX_MS)
    for (const value of [undefined, '', 'later', '-5']) assert.equal(recheckDelay(value, now), RECHECK_DEFAULT_MS, String(value))
  })
})

describe('RenewalWindows', () => {
  const cert = { cert: 'A', notBefore: 0, notAfter: 90 * 24 * HOUR }
  function setup (answers) {
    const asked = []
    const lines = []
    const client = {
      renewalInfo: async (pem) => {
        asked.push(pem)
        const answer = answers.shift()
        if (answer instanceof Error) throw answer
        return answer
      }
    }
    return { windows: new RenewalWindows(client, { warn: (line) => lines.push(line) }), asked, lines }
  }

  it('should ask the CA once per certificate until the answer is due again', async () => {
    const window = { start: 60 * 24 * HOUR, end: 60 * 24 * HOUR + 1 }
    const { windows, asked } = setup([{ window, recheck: HOUR }, { window, recheck: HOUR }, { window, recheck: HOUR }])
    assert.equal(await windows.due('a', cert, 0), window.start)
    assert.equal(await windows.due('a', cert, HOUR - 1), window.start)
    assert.equal(windows.recheckAt('a'), HOUR)
    assert.equal(asked.length, 1)
    await windows.due('a', cert, HOUR)
    assert.equal(asked.length, 2)
    // A new certificate is asked about at once.
    await windows.due('a', { ...cert, cert: 'B' }, HOUR + 1)
    assert.deepEqual(asked, ['A', 'A', 'B'])
    assert.equal(windows.cached('a', 'B'), window.start)
    assert.equal(windows.cached('a', 'A'), Infinity)
  })

  it('should say when the CA wants a certificate replaced now, and carry on by the dates when it cannot be asked (said once)', async () => {
    const { windows, lines } = setup([{ window: { start: 1, end: 2 }, recheck: HOUR }, new Error('timeout'), new Error('timeout'), null])
    assert.equal(await windows.due('a', cert, 1000), 1000)
    assert.match(lines[0], /^acme: a: the CA asks for this certificate to be replaced now \(its renewal window 1970-01-01T00:00:00\.001Z to 1970-01-01T00:00:00\.002Z has passed/)
    assert.equal(await windows.due('a', { ...cert, cert: 'B' }, 2000), Infinity)
    assert.equal(windows.recheckAt('a'), 2000 + RECHECK_DEFAULT_MS)
    assert.equal(await windows.due('a', { ...cert, cert: 'C' }, 3000), Infinity)
    assert.equal(lines.length, 2)
    assert.equal(lines[1], 'acme: a: cannot read the CA\'s renewal information (timeout); renewing by the certificate\'s dates')
    // A CA without renewal information is asked again only after a day.
    assert.equal(await windows.due('a', { ...cert, cert: 'D' }, 4000), Infinity)
    assert.equal(windows.recheckAt('a'), 4000 + RECHECK_MAX_MS)
  })
})
