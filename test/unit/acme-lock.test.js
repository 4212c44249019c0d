'use strict'

// The order lock of automatic HTTPS in a shared storage directory: one
// holder at a time, a crashed holder's lock taken over once it expired, and
// a lock being written right now never mistaken for a stale one.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { OrderLock, readLock } = require('../../lib/acme/lock')
const { renewalTime } = require('../../lib/acme/renewal')

async function lockFile (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-acme-lock-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return path.join(dir, 'name.lock')
}

describe('acme order lock', () => {
  it('lets one owner in, names it to the next, and is free again after release', async (t) => {
    const file = await lockFile(t)
    const a = new OrderLock(file, 'host-a:1', 60000)
    const b = new OrderLock(file, 'host-b:2', 60000)
    assert.deepEqual(await a.acquire(), { acquired: true })
    const refused = await b.acquire()
    assert.equal(refused.acquired, false)
    assert.equal(refused.holder.owner, 'host-a:1')
    assert.ok(refused.holder.expires > Date.now())
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600)
    // b's release must not remove a's lock.
    await b.release()
    assert.equal((await readLock(file)).owner, 'host-a:1')
    await a.release()
    await assert.rejects(fs.access(file), { code: 'ENOENT' })
    assert.deepEqual(await b.acquire(), { acquired: true })
    await b.release()
  })

  it('takes over the lock of a holder that crashed once it has expired', async (t) => {
    const file = await lockFile(t)
    await fs.writeFile(file, JSON.stringify({ owner: 'crashed:9', expires: Date.now() - 1 }))
    const b = new OrderLock(file, 'host-b:2', 60000)
    assert.deepEqual(await b.acquire(), { acquired: true })
    assert.equal((await readLock(file)).owner, 'host-b:2')
    await b.release()
    assert.deepEqual(await fs.readdir(path.dirname(file)), [])
  })

  it('counts an unreadable lock file as held until ttl after it was written', async (t) => {
    const file = await lockFile(t)
    await fs.writeFile(file, '')
    const b = new OrderLock(file, 'host-b:2', 60000)
    const refused = await b.acquire()
    assert.equal(refused.acquired, false)
    assert.equal(refused.holder.owner, 'unknown (unreadable lock file)')
    const old = new Date(Date.now() - 120000)
    await fs.utimes(file, old, old)
    assert.deepEqual(await b.acquire(), { acquired: true })
    await b.release()
  })

  it('of instances finding the same stale lock, exactly one takes it, and the lock file names it', async (t) => {
    const file = await lockFile(t)
    // Many rounds of six: one that removes the stale lock while another has
    // already taken it must not leave two holders (seen once in CI).
    for (let round = 0; round < 30; round++) {
      await fs.writeFile(file, JSON.stringify({ owner: 'crashed:9', expires: Date.now() - 1 }))
      const locks = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => new OrderLock(file, name + round, 60000))
      const results = await Promise.all(locks.map((lock) => lock.acquire()))
      const holders = locks.filter((lock, i) => results[i].acquired)
      assert.equal(holders.length, 1, 'round ' + round)
      assert.equal((await readLock(file)).owner, holders[0].owner)
      await Promise.all(locks.map((lock) => lock.release()))
    }
    assert.deepEqual(await fs.readdir(path.dirname(file)), [])
  })
})

describe('acme renewal time', () => {
  const DAY = 24 * 60 * 60 * 1000
  it('is a third of the lifetime before expiry by default, or renewBeforeDays', () => {
    assert.equal(renewalTime({ notBefore: 0, notAfter: 90 * DAY }, null), 60 * DAY)
    assert.equal(renewalTime({ notBefore: 0, notAfter: 90 * DAY }, 10), 80 * DAY)
  })
})
