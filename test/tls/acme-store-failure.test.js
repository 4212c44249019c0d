'use strict'

// Automatic HTTPS against Pebble, Let's Encrypt's ACME test server, on loopback: the CA issues the
// certificate but svr cannot store it. The order lock must be given back, so that the next attempt
// orders again instead of waiting on a lock that nobody will ever release, and once the storage is
// repaired the name gets its certificate without a restart. Pebble and its DNS are Go programs that
// .ci/run installs.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr } = require('../helpers/server')
const { makeCertificate } = require('../helpers/tls')
const { skipWithout, requireTools } = require('../helpers/tools')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')

describe('automatic HTTPS when storing the certificate fails', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('releases the order lock, orders again on the next attempt, and serves the certificate once storage is repaired', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t, { acme: { retryDelay: 1000 } })
    // The name's certificate directory is a symbolic link to nowhere: it
    // reads as no certificate (ENOENT), so every attempt orders, and no
    // certificate can be written through it, not even by root, which file
    // modes do not stop.
    const certificateDir = path.join(storage, 'certificates', NAME)
    await fs.mkdir(path.dirname(certificateDir), { recursive: true })
    await fs.symlink(path.join(site.dir, 'nowhere', 'at-all'), certificateDir)
    const svr = await startSvr(t, site.configFile)

    const failed = await svr.waitFor(/acme: acme-test\.example: order failed \(attempt \d+\): (ENOENT[^\n]*); retrying in \d+ s\n/, 30000)
    assert.equal(failed[1], "ENOENT: no such file or directory, mkdir '" + certificateDir + "'")
    // The failure is logged after the lock is let go: nothing is held now.
    assert.deepEqual(await fs.readdir(path.join(storage, 'locks')), [])

    await fs.unlink(certificateDir)
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until /, 30000)
    const issued = await storedFingerprint(storage)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued)
    // The lock goes right after the certificate is stored and handed to the
    // workers, which may serve it a moment before.
    await until(async () => (await fs.readdir(path.join(storage, 'locks'))).length === 0, 5000)

    // Every attempt ordered for itself (the CA issued each time; only
    // storing failed): none waited on a lock of its own that the failed one
    // left behind. On a loaded machine a validation may time out too, which
    // is one more failed attempt that ordered.
    assert.doesNotMatch(svr.output, /is ordering it \(lock until/)
    const ordered = svr.output.match(/acme: acme-test\.example: ordering a certificate from /g).length
    const failures = svr.output.match(/acme: acme-test\.example: order failed \(attempt \d+\): /g).length
    assert.equal(ordered, failures + 1)
    assert.equal(pebble.orders(), ordered)
    assert.equal(svr.exitInfo, null)
  })

  it('does not serve a stored key that is not its certificate\'s (a store cut short between the two files), and orders anew', async (t) => {
    const { ports, pebble, site, storage } = await setUp(t)
    // What writeCertificate leaves when the new key is in place and writing
    // the certificate then fails, or the process dies: the old certificate,
    // still valid for months, next to a key that is not its own.
    const certificateDir = path.join(storage, 'certificates', NAME)
    await fs.mkdir(certificateDir, { recursive: true })
    const old = await makeCertificate(site.dir, 'old', [NAME])
    const other = await makeCertificate(site.dir, 'other', [NAME])
    await fs.copyFile(old.cert, path.join(certificateDir, 'cert.pem'))
    await fs.copyFile(other.key, path.join(certificateDir, 'key.pem'))
    const svr = await startSvr(t, site.configFile)

    const loaded = await svr.waitFor(/acme: acme-test\.example: (no certificate yet|certificate loaded from storage)/, 20000)
    assert.equal(loaded[1], 'no certificate yet')
    await svr.waitFor(/acme: acme-test\.example: certificate issued, valid until /, 30000)
    const issued = await storedFingerprint(storage)
    assert.notEqual(issued, old.fingerprint)
    await until(async () => (await handshake(ports.https, NAME)).fingerprint === issued)
    const ordered = svr.output.match(/acme: acme-test\.example: ordering a certificate from /g).length
    assert.equal(pebble.orders(), ordered)
  })
})
