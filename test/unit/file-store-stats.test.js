'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { createStatCache } = require('../../lib/file-store/stats')

const DEFAULTS = { ttl: 1000, maxEntries: 4096 }

describe('stat cache', () => {
  let dir
  before(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-stat-cache-')) })
  after(() => fs.rm(dir, { recursive: true, force: true }))

  function clock () {
    const c = { t: 1000, now: () => c.t }
    return c
  }

  it('answers from memory within the TTL and stats afresh after it', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'a.txt')
    await fs.writeFile(file, 'one')
    const first = cache.lookup(file)
    assert.equal(first.cached, false)
    assert.equal((await first.promise).size, 3)
    await fs.writeFile(file, 'three')
    c.t += 999
    const second = cache.lookup(file)
    assert.equal(second.cached, true)
    assert.equal((await second.promise).size, 3, 'the old stats within the TTL')
    // lru-cache drops an entry once it is older than the TTL.
    c.t += 2
    const third = cache.lookup(file)
    assert.equal(third.cached, false)
    assert.equal((await third.promise).size, 5, 'a changed size after the TTL')
  })

  it('remembers absence, and sees a file created after the TTL', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'later.txt')
    assert.equal(await cache.lookup(file).promise, null)
    await fs.writeFile(file, 'x')
    assert.equal(await cache.lookup(file).promise, null)
    c.t += 1001
    assert.equal((await cache.lookup(file).promise).size, 1)
    await fs.rm(file)
    c.t += 1001
    assert.equal(await cache.lookup(file).promise, null, 'a deleted file is absent after the TTL')
  })

  it('stats afresh after forget, within the TTL', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'forgotten.txt')
    assert.equal(await cache.lookup(file).promise, null)
    await fs.writeFile(file, 'x')
    cache.forget(file)
    const again = cache.lookup(file)
    assert.equal(again.cached, false)
    assert.equal((await again.promise).size, 1)
  })

  it('treats a path through a file as absent', async () => {
    const cache = createStatCache(DEFAULTS)
    const file = path.join(dir, 'plain.txt')
    await fs.writeFile(file, 'x')
    assert.equal(await cache.lookup(path.join(file, 'below')).promise, null)
  })

  it('shares one stat between concurrent lookups', async () => {
    const cache = createStatCache(DEFAULTS)
    const file = path.join(dir, 'shared.txt')
    await fs.writeFile(file, 'x')
    const a = cache.lookup(file)
    const b = cache.lookup(file)
    assert.equal(a.promise, b.promise)
    assert.equal(a.cached, false)
    assert.equal(b.cached, true)
  })

  it('keeps no more than maxEntries, dropping the oldest', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, maxEntries: 3, clock: c })
    const names = ['1', '2', '3', '4'].map((n) => path.join(dir, 'missing-' + n))
    for (const name of names) await cache.lookup(name).promise
    assert.equal(cache.size, 3)
    assert.equal(cache.lookup(names[3]).cached, true)
    assert.equal(cache.lookup(names[0]).cached, false, 'the oldest entry was dropped')
  })

  it('does not keep errors other than absence', async () => {
    const cache = createStatCache(DEFAULTS)
    const long = path.join(dir, 'x'.repeat(5000))
    await assert.rejects(cache.lookup(long).promise, { code: 'ENAMETOOLONG' })
    assert.equal(cache.size, 0)
    await assert.rejects(cache.lookup(long).promise, { code: 'ENAMETOOLONG' })
  })

  it('keeps nothing with a TTL of 0', async () => {
    const file = path.join(dir, 'zero.txt')
    const cache = createStatCache({ ...DEFAULTS, ttl: 0 })
    assert.equal(await cache.lookup(file).promise, null)
    await fs.writeFile(file, 'z')
    const after = cache.lookup(file)
    assert.equal(after.cached, false)
    assert.equal((await after.promise).size, 1)
    assert.equal(cache.size, 0)
    assert.equal(cache.peek(file), undefined)
  })

  it('takes fresh stats within the TTL and keeps them for the next lookups', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'fresh.txt')
    await fs.writeFile(file, 'one')
    assert.equal((await cache.lookup(file).promise).size, 3)
    await fs.writeFile(file, 'three')
    assert.equal((await cache.fresh(file)).size, 5)
    const next = cache.lookup(file)
    assert.equal(next.cached, true)
    assert.equal((await next.promise).size, 5)
    assert.equal(cache.peek(file).size, 5)
  })

  it('shares a fresh stat still under way, and takes a new one once it is settled', async () => {
    const cache = createStatCache(DEFAULTS)
    const file = path.join(dir, 'fresh-crowd.txt')
    await fs.writeFile(file, 'one')
    await cache.lookup(file).promise
    const first = cache.fresh(file)
    assert.equal(cache.fresh(file), first)
    assert.equal((await first).size, 3)
    await fs.writeFile(file, 'three')
    const later = cache.fresh(file)
    assert.equal((await later).size, 5)
  })

  it('is not fooled by the system clock being set back', async (t) => {
    const realNow = Date.now
    let stepBack = 0
    t.mock.method(Date, 'now', () => realNow() - stepBack)
    const cache = createStatCache({ ...DEFAULTS, ttl: 20 })
    const file = path.join(dir, 'clock.txt')
    assert.equal(await cache.lookup(file).promise, null)
    await fs.writeFile(file, 'c')
    // An NTP step back of an hour must not keep the absence for an hour.
    stepBack = 3600 * 1000
    await new Promise((resolve) => setTimeout(resolve, 40))
    const again = cache.lookup(file)
    assert.equal(again.cached, false)
    assert.equal((await again.promise).size, 1)
  })

  it('does not keep very long paths, so made-up ones cannot fill it with big keys', async () => {
    const cache = createStatCache(DEFAULTS)
    const long = path.join(dir, 'a/'.repeat(600), 'missing')
    assert.equal(await cache.lookup(long).promise, null)
    assert.equal(cache.lookup(long).cached, false)
    assert.equal(cache.size, 0)
  })

  it('drops the entry taken longest ago, not the one first seen', async () => {
    const c = clock()
    const cache = createStatCache({ ...DEFAULTS, maxEntries: 2, clock: c })
    const [a, b, d] = ['a', 'b', 'd'].map((n) => path.join(dir, 'order-' + n))
    await cache.lookup(a).promise
    await cache.lookup(b).promise
    c.t += 1001
    await cache.lookup(a).promise
    await cache.lookup(d).promise
    assert.equal(cache.lookup(a).cached, true, 'a was taken again after b')
    assert.equal(cache.lookup(b).cached, false)
  })
})
