'use strict'

// The private keys automatic HTTPS puts in the fleet's store are sealed
// with the key of acme.storeKeyFile: they open with that key only.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { Sealer, readStoreKey, PREFIX } = require('../../lib/acme/sealing')

const PEM = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n'

async function keyFile (t, text) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-store-key-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'store.key')
  await fs.writeFile(file, text, { mode: 0o600 })
  return file
}

describe('acme store key sealing', () => {
  it('seals with a fresh IV each time and opens to the same text', () => {
    const sealer = new Sealer(crypto.randomBytes(32))
    const a = sealer.seal(PEM)
    const b = sealer.seal(PEM)
    assert.ok(a.startsWith(PREFIX))
    assert.notEqual(a, b)
    assert.ok(!a.includes('PRIVATE KEY'))
    assert.equal(sealer.open(a), PEM)
    assert.equal(sealer.open(b), PEM)
  })

  it('refuses a value sealed under another key, an altered one, and a sealed one without a key', () => {
    const sealed = new Sealer(crypto.randomBytes(32)).seal(PEM)
    assert.throws(() => new Sealer(crypto.randomBytes(32)).open(sealed), /does not open with the key/)
    const key = crypto.randomBytes(32)
    const altered = PREFIX + Buffer.from(new Sealer(key).seal(PEM).slice(PREFIX.length), 'base64').fill(0, 40).toString('base64')
    assert.throws(() => new Sealer(key).open(altered), /does not open/)
    assert.throws(() => new Sealer(null).open(sealed), /storeKeyFile" is not set/)
  })

  it('stores as is without a key, and takes a plain value with one (a store filled before the key file)', () => {
    assert.equal(new Sealer(null).seal(PEM), PEM)
    assert.equal(new Sealer(crypto.randomBytes(32)).open(PEM), PEM)
  })

  it('reads a key file of 64 hex digits or base64, and refuses anything else', async (t) => {
    const key = crypto.randomBytes(32)
    assert.deepEqual(await readStoreKey(await keyFile(t, key.toString('hex') + '\n')), key)
    assert.deepEqual(await readStoreKey(await keyFile(t, key.toString('base64') + '\n')), key)
    assert.equal(await readStoreKey(null), null)
    await assert.rejects(readStoreKey(await keyFile(t, crypto.randomBytes(16).toString('base64'))), /does not hold a 32-byte key/)
    await assert.rejects(readStoreKey(await keyFile(t, 'not a key at all\n')), /does not hold a 32-byte key/)
    await assert.rejects(readStoreKey(path.join(os.tmpdir(), 'svr-no-such-key-' + crypto.randomBytes(4).toString('hex'))), { code: 'ENOENT' })
  })
})
