'use strict'

// The secrets svr puts in the fleet's store are sealed with the key of
// store.keyFile: they open with that key, under their own name, only.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { Sealer, readStoreKey, PREFIX } = require('../../lib/store/sealing')

const PEM = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n'

async function keyFile (t, text) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-store-key-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'store.key')
  await fs.writeFile(file, text, { mode: 0o600 })
  return file
}

describe('store sealing', () => {
  const NAME = 'acme:cert:example.com'

  it('seals with a fresh IV each time and opens to the same text', () => {
    const sealer = new Sealer(crypto.randomBytes(32))
    const a = sealer.seal(PEM, NAME)
    const b = sealer.seal(PEM, NAME)
    assert.ok(a.startsWith(PREFIX))
    assert.notEqual(a, b)
    assert.ok(!a.includes('PRIVATE KEY'))
    assert.equal(sealer.open(a, NAME), PEM)
    assert.equal(sealer.open(b, NAME), PEM)
  })

  it('refuses a value sealed under another key or name, an altered or cut one, and a sealed one without a key', () => {
    const sealed = new Sealer(crypto.randomBytes(32)).seal(PEM, NAME)
    assert.throws(() => new Sealer(crypto.randomBytes(32)).open(sealed, NAME), /does not open with the key/)
    const key = crypto.randomBytes(32)
    const sealer = new Sealer(key)
    const raw = Buffer.from(sealer.seal(PEM, NAME).slice(PREFIX.length), 'base64')
    assert.throws(() => sealer.open(PREFIX + Buffer.from(raw).fill(0, 40).toString('base64'), NAME), /does not open/)
    assert.throws(() => sealer.open(PREFIX + raw.toString('base64'), 'acme:cert:other.example'), /does not open .*for another name/)
    // Nor one with part of its tag cut out, nor one without room for a tag.
    const shortTag = Buffer.concat([raw.subarray(0, 12 + 4), raw.subarray(12 + 16)])
    assert.throws(() => sealer.open(PREFIX + shortTag.toString('base64'), NAME), /does not open/)
    assert.throws(() => sealer.open(PREFIX + raw.subarray(0, 20).toString('base64'), NAME), /too short/)
    assert.throws(() => new Sealer(null).open(sealed, NAME), /"store\.keyFile" is not set/)
  })

  it('stores as is without a key, and refuses a plain value with one', () => {
    assert.equal(new Sealer(null).seal(PEM, NAME), PEM)
    assert.equal(new Sealer(null).open(PEM, NAME), PEM)
    assert.throws(() => new Sealer(crypto.randomBytes(32)).open(PEM, NAME), /stored unencrypted while "store\.keyFile" is set/)
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
