'use strict'

// AcmeStorage#leftover: after a switch of CA, the certificate served until
// the configured CA has issued is the newest valid one of a CA no longer
// configured, or the one an earlier build kept at the top of the directory.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const selfsigned = require('selfsigned')
const { AcmeStorage } = require('../../lib/acme/storage')
const { removeDir } = require('../helpers/server')

const NAME = 'www.example.com'
const DAY_MS = 24 * 60 * 60 * 1000

async function pair (notAfter, name = NAME) {
  const pems = await selfsigned.generate([{ name: 'commonName', value: name }], {
    keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notBeforeDate: new Date(notAfter - 90 * DAY_MS), notAfterDate: new Date(notAfter)
  })
  return { cert: pems.cert, key: pems.private }
}

async function storageDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-acme-storage-'))
  t.after(() => removeDir(dir))
  return dir
}

describe('AcmeStorage#leftover(name, configured)', () => {
  it('should find the newest valid certificate among CAs not configured and the top of the directory', async (t) => {
    const dir = await storageDir(t)
    const now = Date.now()
    await new AcmeStorage(dir, '').writeCertificate(NAME, await pair(now + 10 * DAY_MS))
    await new AcmeStorage(dir, 'old-ca').writeCertificate(NAME, await pair(now + 20 * DAY_MS))
    await new AcmeStorage(dir, 'expired-ca').writeCertificate(NAME, await pair(now - DAY_MS))
    await new AcmeStorage(dir, 'new-ca').writeCertificate(NAME, await pair(now + 60 * DAY_MS))
    const storage = new AcmeStorage(dir, 'new-ca')

    const found = await storage.leftover(NAME, new Set(['new-ca']))
    assert.equal(found.issuer, 'old-ca')
    assert.equal(Math.round((found.notAfter - now) / DAY_MS), 20)
    const legacy = await storage.leftover(NAME, new Set(['new-ca', 'old-ca']))
    assert.equal(legacy.issuer, '')
    assert.equal(Math.round((legacy.notAfter - now) / DAY_MS), 10)
    assert.equal(await storage.leftover('other.example.com', new Set(['new-ca'])), null)
    // An expired one is never served.
    await new AcmeStorage(dir, 'expired-ca').writeCertificate('gone.example.com', await pair(now - DAY_MS, 'gone.example.com'))
    assert.equal(await storage.leftover('gone.example.com', new Set(['new-ca'])), null)
  })

  it('should find nothing in a storage directory that does not exist yet', async (t) => {
    const dir = path.join(await storageDir(t), 'missing')
    assert.equal(await new AcmeStorage(dir, 'ca').leftover(NAME, new Set(['ca'])), null)
  })
})
