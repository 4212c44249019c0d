'use strict'

// Automatic HTTPS in a fleet that shares only a store (a real redis-server),
// no directory: one order for the fleet, every instance serves the
// certificate, the CA's challenge is answered by an instance that did not
// order, private keys are sealed in the store, and an instance keeps its
// certificates (and orders nothing) while the store is down.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { makeCertificate } = require('../helpers/tls')
const { freePorts, skipWithout, requireTools } = require('../helpers/tools')
const { startRedis } = require('../helpers/redis')
const { NAME, TOOLS, setUp, handshake, storedFingerprint, until } = require('../helpers/acme')
const { FleetStore } = require('../../lib/store/fleet-store')
const { AcmeStorage } = require('../../lib/acme/storage')
const { StoreStorage } = require('../../lib/acme/store-storage')
const { PREFIX } = require('../../lib/store/sealing')
const { issuerKey } = require('../../lib/acme/issuers')

const STORE_PREFIX = 'svr:'
// The storage's keys of one CA (lib/acme/issuers.js names them).
const ISSUER = 'ca.test-dir'
const PREFIX_OF_CA = 'acme:' + ISSUER + ':'
const ACCOUNT = PREFIX_OF_CA + 'account'
const LOCK = PREFIX_OF_CA + 'lock:' + NAME
const CERT = PREFIX_OF_CA + 'cert:' + NAME

function storeSettings (redis) {
  return { url: redis.url, passwordFile: null, ca: null, keyFile: null, prefix: STORE_PREFIX, sentinels: [], masterName: null, commandTimeout: 500 }
}

// A FleetStore as the primary opens it, ready, with the key of
// store.keyFile (or none); closed after the test.
async function openStore (t, redis, key = null) {
  const warnings = []
  const log = { info () {}, warn: (line) => warnings.push(line) }
  const store = new FleetStore(storeSettings(redis), { password: null, ca: null, key }, log)
  store.warnings = warnings
  t.after(() => store.stop())
  await until(() => store.up, 10000)
  return store
}

// What a test reads from the store behind svr's back.
function raw (t, redis) {
  const Redis = require('ioredis')
  const client = new Redis(redis.url, { keyPrefix: STORE_PREFIX, lazyConnect: false })
  t.after(() => client.disconnect())
  return client
}

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-acme-store-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

async function storeStorage (t, store) {
  const dir = await tempDir(t)
  const warnings = []
  const storage = new StoreStorage(store, new AcmeStorage(path.join(dir, 'acme'), ISSUER), { warn: (line) => warnings.push(line) })
  await storage.prepare()
  return { storage, warnings, dir: path.join(dir, 'acme') }
}

async function pair (t) {
  const dir = await tempDir(t)
  const { cert, key, fingerprint } = await makeCertificate(dir, 'pair', [NAME])
  return { cert: await fs.readFile(cert, 'utf8'), key: await fs.readFile(key, 'utf8'), fingerprint }
}

describe('automatic HTTPS storage in the fleet\'s store', { skip: skipWithout('redis-server') }, () => {
  before(() => requireTools(null, 'redis-server'))

  it('shares the account, certificates, challenges and the lock, seals keys, and falls back to disk while down', async (t) => {
    const redis = await startRedis(t)
    const key = crypto.randomBytes(32)
    const store = await openStore(t, redis, key)
    const a = await storeStorage(t, store)
    const b = await storeStorage(t, await openStore(t, redis, key))

    // One account for both, the first written.
    const [ka, kb] = await Promise.all([a.storage.accountKey(async () => 'key-a\n'), b.storage.accountKey(async () => 'key-b\n')])
    assert.equal(ka.pem, kb.pem)
    assert.equal([ka.created, kb.created].filter(Boolean).length, 1)
    const client = raw(t, redis)
    assert.ok((await client.get(ACCOUNT)).startsWith(PREFIX))

    // A challenge one publishes the other answers, until withdrawn.
    await a.storage.writeChallenge('token-1', 'token-1.thumbprint')
    assert.equal(await b.storage.readChallenge('token-1'), 'token-1.thumbprint')
    assert.ok(await client.pttl('acme:challenge:token-1') > 0)
    await a.storage.writeChallenge('token-1', null)
    assert.equal(await b.storage.readChallenge('token-1'), null)

    // One holder at a time; only the holder refreshes or releases.
    const lockA = a.storage.orderLock(NAME, 'owner-a', 60000)
    const lockB = b.storage.orderLock(NAME, 'owner-b', 60000)
    assert.deepEqual(await lockA.acquire(), { acquired: true })
    const refused = await lockB.acquire()
    assert.equal(refused.acquired, false)
    assert.equal(refused.holder.owner, 'owner-a')
    await client.pexpire(LOCK, 5000)
    await lockB.refresh()
    assert.ok(await client.pttl(LOCK) <= 5000, 'not refreshed by another owner')
    await lockA.refresh()
    assert.ok(await client.pttl(LOCK) > 5000, 'refreshed by its owner')
    await lockB.release()
    assert.equal(await client.get(LOCK), 'owner-a')
    await lockA.release()
    assert.deepEqual(await lockB.acquire(), { acquired: true })
    await lockB.release()
    // A lock that is ours already (a SET whose reply timed out) is taken, for the whole lifetime.
    await client.set(LOCK, 'owner-a', 'PX', 5000)
    assert.deepEqual(await lockA.acquire(), { acquired: true })
    assert.ok(await client.pttl(LOCK) > 5000)
    // Lost while the store did not answer: said once.
    await client.set(LOCK, 'owner-x')
    await lockA.refresh()
    await lockA.refresh()
    assert.deepEqual(store.warnings.filter((line) => line.includes('lost the order lock')),
      ['acme: lost the order lock ' + LOCK + ' (it expired while the store did not answer); another instance may order the same name meanwhile'])
    await client.del(LOCK)

    // A certificate one stores the other reads, and keeps on its own disk.
    const issued = await pair(t)
    await a.storage.writeCertificate(NAME, issued)
    const stored = JSON.parse(await client.get(CERT))
    assert.equal(stored.cert, issued.cert)
    assert.ok(stored.key.startsWith(PREFIX) && !stored.key.includes('PRIVATE KEY'))
    assert.equal((await b.storage.readCertificate(NAME)).key, issued.key)
    assert.equal((await new AcmeStorage(b.dir, ISSUER).readCertificate(NAME)).key, issued.key)

    // Another key (or none) opens nothing: logged, absent, never used.
    const other = await storeStorage(t, await openStore(t, redis, crypto.randomBytes(32)))
    assert.equal(await other.storage.readCertificate(NAME), null)
    assert.match(other.warnings.join('\n'), /the key of acme-test\.example in the store cannot be used: it does not open/)
    const none = await storeStorage(t, await openStore(t, redis))
    assert.equal(await none.storage.readCertificate(NAME), null)
    await assert.rejects(other.storage.accountKey(async () => 'key-c\n'), /cannot be used/)
    await assert.rejects(none.storage.accountKey(async () => 'key-d\n'), /cannot be used/)
    assert.equal(JSON.parse(await client.get(CERT)).key, stored.key, 'the fleet\'s certificate is left alone')
    // Nor does an instance without the key write a plain key over the sealed one, even for a newer certificate.
    await none.storage.writeCertificate(NAME, await pair(t))
    assert.match(none.warnings.join('\n'), /cannot put the certificate in the store \(the store holds it encrypted and "store\.keyFile" is not set here\)/)
    assert.equal(JSON.parse(await client.get(CERT)).key, stored.key)
    // A sealed key moved to another name does not open there.
    await client.set(PREFIX_OF_CA + 'cert:other.example', JSON.stringify({ cert: stored.cert, key: stored.key }))
    assert.equal(await b.storage.readCertificate('other.example'), null)
    assert.match(b.warnings.join('\n'), /the key of other\.example in the store cannot be used: it does not open .*for another name/)

    // The store down: the disk serves, nobody gets the lock, no challenge is published.
    await redis.stop()
    await until(() => !store.up, 10000)
    assert.equal((await b.storage.readCertificate(NAME)).key, issued.key)
    assert.equal((await b.storage.orderLock(NAME, 'owner-b', 60000).acquire()).unavailable, 'the store is down')
    assert.equal(await b.storage.readChallenge('token-1'), null)
    await assert.rejects(b.storage.writeChallenge('token-2', 'x'), /store is down/)
  })

  it('stores keys as they are without a key file', async (t) => {
    const redis = await startRedis(t)
    const store = await openStore(t, redis)
    const a = await storeStorage(t, store)
    const issued = await pair(t)
    await a.storage.writeCertificate(NAME, issued)
    assert.equal(JSON.parse(await raw(t, redis).get(CERT)).key, issued.key)
  })

  it('with a key file, uses no key stored unencrypted: a planted account key is replaced, a planted certificate ignored', async (t) => {
    const redis = await startRedis(t)
    const client = raw(t, redis)
    const planted = await pair(t)
    await client.set(ACCOUNT, 'planted account key\n')
    await client.set(CERT, JSON.stringify({ cert: planted.cert, key: planted.key }))
    const a = await storeStorage(t, await openStore(t, redis, crypto.randomBytes(32)))
    const account = await a.storage.accountKey(async () => 'own account key\n')
    assert.deepEqual(account, { pem: 'own account key\n', created: true })
    assert.ok((await client.get(ACCOUNT)).startsWith(PREFIX))
    assert.equal(await a.storage.readCertificate(NAME), null)
    assert.match(a.warnings.join('\n'), /the key of acme-test\.example in the store cannot be used: it is stored unencrypted while "store\.keyFile" is set/)
  })
})

describe('automatic HTTPS in a fleet sharing only a store', { skip: skipWithout('redis-server', ...TOOLS) }, () => {
  before(() => requireTools(null, 'redis-server', ...TOOLS))

  it('orders once; both serve the certificate; the instance that did not order answers the CA', async (t) => {
    const redis = await startRedis(t)
    // Pebble validates through a relay to this site's ports only (and to
    // the unused secondHttp): the instance that orders listens elsewhere,
    // so the CA reaches only the one that did not order.
    const { ports, pebble, site, storage } = await setUp(t, {
      fleet: true,
      config: { store: { url: redis.url, keyFile: 'store.key' }, workers: 1 }
    })
    const caKeys = 'acme:' + issuerKey(pebble.directoryUrl) + ':'
    const key = crypto.randomBytes(32).toString('hex') + '\n'
    await fs.writeFile(path.join(site.dir, 'store.key'), key, { mode: 0o600 })
    const ordering = await makeSite(t, {}, { 'index.html': 'hello\n' })
    await fs.writeFile(path.join(ordering.dir, 'store.key'), key, { mode: 0o600 })
    const [http, https] = await freePorts(2)
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await ordering.writeConfig({ ...config, wwwroot: ordering.webroot, port: '127.0.0.1:' + http, sport: '127.0.0.1:' + https })

    const a = await startSvr(t, ordering.configFile)
    await a.waitFor(/acme: acme-test\.example: ordering a certificate/, 20000)
    // Only now the instance the CA reaches; it finds the lock held in the store.
    const b = await startSvr(t, site.configFile)
    await a.waitFor(/acme: acme-test\.example: certificate issued/, 30000)
    const issued = await storedFingerprint(path.join(ordering.dir, 'state', 'acme', issuerKey(pebble.directoryUrl)))
    await until(async () => (await handshake(https, NAME)).fingerprint === issued &&
      (await handshake(ports.https, NAME)).fingerprint === issued)
    const acmeLines = (svr) => svr.output.split('\n').filter((line) => /acme:|store/.test(line)).join('\n')
    assert.equal(pebble.orders(), 1, acmeLines(a) + '\n---\n' + acmeLines(b))
    assert.doesNotMatch(b.output, /ordering a certificate/)
    // b never ordered and shares no directory: the CA's validation, which
    // reached b alone, was answered from the token a put in the store.
    await b.waitFor(/picked up the certificate in storage/, 20000)
    assert.equal(await storedFingerprint(storage), issued, 'written through to b\'s own directory')
    const client = raw(t, redis)
    assert.ok(JSON.parse(await client.get(caKeys + 'cert:' + NAME)).key.startsWith(PREFIX))
    assert.deepEqual(await client.keys(STORE_PREFIX + caKeys + 'lock:*'), [])
    assert.doesNotMatch(a.output + b.output, /BEGIN|PRIVATE KEY/)

    // Restarted while the store is down, b serves from its own disk and orders nothing.
    await redis.stop()
    await b.kill()
    const again = await startSvr(t, site.configFile)
    await again.waitFor(/acme: acme-test\.example: certificate loaded from storage/)
    assert.equal((await handshake(ports.https, NAME)).fingerprint, issued)
    assert.equal(pebble.orders(), 1)
  })

  it('orders nothing while the store is down, says so once, and orders once it is back', async (t) => {
    const redis = await startRedis(t)
    await redis.stop()
    const { ports, pebble, site, storage } = await setUp(t, { config: { store: { url: redis.url }, workers: 1 } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: acme-test\.example: no order while the store is down \(the order lock is in it\); trying again every 10 s/, 20000)
    assert.equal(pebble.orders(), 0)
    await redis.start()
    await svr.waitFor(/acme: acme-test\.example: certificate issued/, 40000)
    assert.equal(svr.output.split('no order while').length - 1, 1, 'said once')
    assert.equal(pebble.orders(), 1)
    assert.equal((await handshake(ports.https, NAME)).fingerprint, await storedFingerprint(storage))
  })
})
