'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { createBodyCache } = require('../../lib/file-store/bodies')

const DEFAULTS = { maxFileBytes: 1024 * 1024, maxBytes: 16 * 1024 * 1024, ttl: 1000 }

describe('file body cache', () => {
  let dir
  before(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-body-cache-')) })
  after(() => fs.rm(dir, { recursive: true, force: true }))

  // What the static stage does: stat the file, then load it.
  async function load (cache, file) {
    return cache.load(file, await fs.stat(file))
  }

  function clock () {
    const c = { t: 1000, now: () => c.t }
    return c
  }

  it('holds a file with the stats of the bytes it read', async () => {
    const cache = createBodyCache(DEFAULTS)
    const file = path.join(dir, 'a.txt')
    await fs.writeFile(file, 'hello')
    const entry = await load(cache, file)
    assert.equal(entry.body.toString(), 'hello')
    assert.equal(entry.stat.size, 5)
    assert.equal(cache.peek(file, await fs.stat(file)), entry)
  })

  it('misses once the file changed on disk', async () => {
    const cache = createBodyCache(DEFAULTS)
    const file = path.join(dir, 'b.txt')
    await fs.writeFile(file, 'one')
    await load(cache, file)
    await fs.writeFile(file, 'three')
    assert.equal(cache.peek(file, await fs.stat(file)), null, 'size changed')
    const entry = await load(cache, file)
    assert.equal(entry.body.toString(), 'three')
    const stat = await fs.stat(file)
    await fs.utimes(file, stat.atime, new Date(stat.mtimeMs + 5000))
    assert.equal(cache.peek(file, await fs.stat(file)), null, 'mtime changed')
  })

  it('misses after the TTL, so the symlink policy is checked again', async () => {
    const c = clock()
    const cache = createBodyCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'c.txt')
    await fs.writeFile(file, 'c')
    await load(cache, file)
    const stat = await fs.stat(file)
    c.t += 999
    assert.notEqual(cache.peek(file, stat), null)
    c.t += 1
    assert.equal(cache.peek(file, stat), null)
  })

  it('refuses files over maxFileBytes and keeps bodies within maxBytes', async () => {
    const cache = createBodyCache({ ...DEFAULTS, maxFileBytes: 10, maxBytes: 25 })
    const big = path.join(dir, 'big.txt')
    await fs.writeFile(big, 'x'.repeat(11))
    assert.equal(cache.fits(await fs.stat(big)), false)
    assert.equal(await load(cache, big), null)
    const names = ['d1', 'd2', 'd3'].map((n) => path.join(dir, n))
    for (const name of names) {
      await fs.writeFile(name, 'y'.repeat(10))
      await load(cache, name)
    }
    assert.equal(cache.size, 2)
    assert.equal(cache.bytes, 20)
    assert.equal(cache.peek(names[0], await fs.stat(names[0])), null, 'the oldest went first')
    assert.notEqual(cache.peek(names[2], await fs.stat(names[2])), null)
  })

  it('reads once for concurrent loads, and rejects for a missing file', async () => {
    const cache = createBodyCache(DEFAULTS)
    const file = path.join(dir, 'e.txt')
    await fs.writeFile(file, 'e')
    const [a, b] = await Promise.all([load(cache, file), load(cache, file)])
    assert.equal(a, b)
    await assert.rejects(cache.load(path.join(dir, 'missing'), { size: 1, ino: 1, dev: 1, mtimeMs: 0 }), { code: 'ENOENT' })
  })

  it('renews an entry that still matches fresh stats without reading it again', async () => {
    const c = clock()
    const cache = createBodyCache({ ...DEFAULTS, clock: c })
    const file = path.join(dir, 'renew.txt')
    await fs.writeFile(file, 'renew')
    const first = await load(cache, file)
    c.t += 5000
    const stat = await fs.stat(file)
    assert.equal(cache.peek(file, stat), null, 'past the TTL')
    assert.equal(await cache.load(file, stat), first, 'the same entry, not a new read')
    assert.equal(cache.peek(file, stat), first, 'checked again now')
  })

  it('does not keep a body read from another file than the stats describe', async () => {
    const cache = createBodyCache(DEFAULTS)
    const file = path.join(dir, 'swapped.txt')
    await fs.writeFile(file, 'judged')
    const judged = await fs.stat(file)
    // Replaced between the caller's stat and the read.
    await fs.rm(file)
    await fs.writeFile(path.join(dir, 'filler.txt'), 'keeps the inode number from coming back')
    await fs.writeFile(file, 'other!')
    assert.notEqual((await fs.stat(file)).ino, judged.ino)
    assert.equal(await cache.load(file, judged), null)
    assert.equal(cache.size, 0)
  })

  it('does not flush what it holds for a file it cannot hold', async () => {
    const cache = createBodyCache({ ...DEFAULTS, maxFileBytes: 100, maxBytes: 20 })
    const small = path.join(dir, 'small.txt')
    const large = path.join(dir, 'large.txt')
    await fs.writeFile(small, 's'.repeat(10))
    await fs.writeFile(large, 'l'.repeat(50))
    await load(cache, small)
    assert.equal(cache.fits(await fs.stat(large)), false, 'larger than maxBytes')
    assert.equal(await load(cache, large), null)
    assert.notEqual(cache.peek(small, await fs.stat(small)), null)
  })

  it('holds nothing with maxBytes 0', async () => {
    const cache = createBodyCache({ ...DEFAULTS, maxBytes: 0 })
    const file = path.join(dir, 'none.txt')
    await fs.writeFile(file, '')
    assert.equal(cache.fits(await fs.stat(file)), false)
    assert.equal(await load(cache, file), null)
    assert.equal(cache.size, 0)
  })

  it('reads no more than maxBytes of different files at once', async () => {
    const cache = createBodyCache({ ...DEFAULTS, maxFileBytes: 10, maxBytes: 25 })
    const names = ['h1', 'h2', 'h3'].map((n) => path.join(dir, n))
    for (const name of names) await fs.writeFile(name, 'z'.repeat(10))
    const stats = await Promise.all(names.map((name) => fs.stat(name)))
    const pending = names.map((name, i) => cache.load(name, stats[i]))
    assert.equal(cache.loadingBytes, 20)
    const loaded = await Promise.all(pending)
    assert.equal(loaded.filter((entry) => entry !== null).length, 2, 'the third is left to stream')
    assert.equal(cache.loadingBytes, 0)
  })

  it('reads again a file rewritten in place with the same size and modification time', async () => {
    const cache = createBodyCache(DEFAULTS)
    const file = path.join(dir, 'fixed-mtime.txt')
    // A reproducible build sets every mtime to one epoch.
    const epoch = 315532800
    await fs.writeFile(file, 'v1.2.3')
    await fs.utimes(file, epoch, epoch)
    const before = await fs.stat(file)
    assert.equal((await cache.load(file, before)).body.toString(), 'v1.2.3')
    await new Promise((resolve) => setTimeout(resolve, 20))
    await fs.writeFile(file, 'v1.2.4')
    await fs.utimes(file, epoch, epoch)
    const after = await fs.stat(file)
    assert.equal(after.mtimeMs, before.mtimeMs)
    assert.equal(after.ino, before.ino)
    assert.equal(cache.peek(file, after), null)
    assert.equal((await cache.load(file, after)).body.toString(), 'v1.2.4')
  })

  it('does not wait on a FIFO that took the place of a file', async (t) => {
    const fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    const cache = createBodyCache(DEFAULTS)
    // Stats of a small regular file, as a stale cache would give them.
    const stat = { ...(await fs.stat(fifo)), size: 1, mtimeMs: 0, ctimeMs: 0 }
    let timer
    const late = new Promise((resolve) => { timer = setTimeout(resolve, 1000, 'blocked') })
    const result = await Promise.race([cache.load(fifo, stat), late])
    clearTimeout(timer)
    if (result === 'blocked') {
      // Let the blocked open go, so that the test process can end.
      const writer = await fs.open(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
      await writer.close()
    }
    assert.equal(result, null)
  })
})
