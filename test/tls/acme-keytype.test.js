'use strict'

// acme.keyType against Pebble on loopback: the certificate svr orders, and
// serves, has a key of the configured type. Pebble and its DNS are Go
// programs that .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS key types', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  // Without a default certificate for RSA: Node keeps the default
  // certificate's ECDSA key beside the RSA one a name's context brings, and
  // clients that can do ECDSA get the default (docs/https.md).
  for (const [keyType, expected, standIn] of [['rsa2048', { type: 'rsa', size: 2048 }, false], ['ecdsa-p384', { type: 'ec', size: 'secp384r1' }, true]]) {
    it('orders and serves a certificate with a ' + keyType + ' key', async (t) => {
      const { ports, site, storage } = await setUp(t, { acme: { keyType }, standIn })
      const svr = await startSvr(t, site.configFile)
      await svr.waitFor(/acme: acme-test\.example: certificate issued/, 30000)
      const dir = path.join(storage, 'certificates', NAME)
      const cert = new crypto.X509Certificate(await fs.readFile(path.join(dir, 'cert.pem')))
      const key = crypto.createPrivateKey(await fs.readFile(path.join(dir, 'key.pem')))
      for (const k of [cert.publicKey, key]) {
        assert.equal(k.asymmetricKeyType, expected.type)
        const details = k.asymmetricKeyDetails
        assert.equal(expected.type === 'rsa' ? details.modulusLength : details.namedCurve, expected.size)
      }
      const issued = await storedFingerprint(storage)
      await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued)
    })
  }
})
