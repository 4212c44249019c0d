'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { DiskStore } = require('../../lib/cache/disk-store')

async function store (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-cache-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return new DiskStore(path.join(dir, 'cache'))
}

describe('the response cache on disk', () => {
  it('should give back what was stored, replace it, and forget it', async (t) => {
    const cache = await store(t)
    const body = Buffer.from('héllo body')
    assert.equal(await cache.put('GET site.example/a', { status: 200, headers: { etag: '"1"' } }, body), await fileSize(cache, 'GET site.example/a'))
    assert.deepEqual(await cache.get('GET site.example/a'), { meta: { status: 200, headers: { etag: '"1"' } }, body })
    await cache.put('GET site.example/a', { status: 404 }, Buffer.alloc(0))
    assert.deepEqual(await cache.get('GET site.example/a'), { meta: { status: 404 }, body: Buffer.alloc(0) })
    assert.equal(await cache.get('GET site.example/b'), null)
    assert.equal(await cache.delete('GET site.example/a'), true)
    assert.equal(await cache.delete('GET site.example/a'), false)
    assert.equal(await cache.get('GET site.example/a'), null)
  })

  it('should keep files private and leave no temporary file behind', async (t) => {
    const cache = await store(t)
    await cache.put('k', {}, Buffer.from('x'))
    const file = cache.fileOf('k')
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600)
    assert.equal((await fs.stat(path.dirname(file))).mode & 0o777, 0o700)
    assert.deepEqual(await fs.readdir(path.dirname(file)), [path.basename(file)])
  })

  it('should take a damaged or foreign file for no entry, and remove a damaged one', async (t) => {
    const cache = await store(t)
    await cache.put('k', { a: 1 }, Buffer.from('body'))
    const file = cache.fileOf('k')
    const whole = await fs.readFile(file)
    for (const damaged of [whole.subarray(0, 3), whole.subarray(0, 10), Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff]), whole.subarray(4)])]) {
      await fs.writeFile(file, damaged)
      assert.equal(await cache.get('k'), null)
      await assert.rejects(fs.stat(file), { code: 'ENOENT' })
    }
    // A file holding another key (a hash collision, or a file moved by hand) is no entry for this one.
    await cache.put('other', { b: 2 }, Buffer.from('x'))
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.copyFile(cache.fileOf('other'), file)
    assert.equal(await cache.get('k'), null)
  })

  it('should let a reader see a whole entry or none while it is rewritten', async (t) => {
    const cache = await store(t)
    const bodies = [Buffer.alloc(300000, 'a'), Buffer.alloc(200000, 'b')]
    await cache.put('k', { n: 0 }, bodies[0])
    const reads = []
    for (let i = 1; i <= 20; i++) {
      const n = i % 2
      reads.push(cache.put('k', { n }, bodies[n]), cache.get('k').then((entry) => {
        assert.notEqual(entry, null)
        assert.deepEqual(entry.body, bodies[entry.meta.n])
      }))
    }
    await Promise.all(reads)
  })

  it('should find every entry of an earlier run, oldest first, and clear what is no entry', async (t) => {
    const cache = await store(t)
    const sizes = {}
    for (const [i, key] of ['GET a /old', 'GET a /middle', 'GET a /new'].entries()) {
      sizes[key] = await cache.put(key, { n: i }, Buffer.alloc(100 * (i + 1)))
      const time = new Date(Date.now() - (3 - i) * 60000)
      await fs.utimes(cache.fileOf(key), time, time)
    }
    const damagedFile = cache.fileOf('GET a /damaged')
    await fs.mkdir(path.dirname(damagedFile), { recursive: true })
    await fs.writeFile(damagedFile, Buffer.from([0, 0, 0, 200, 1, 2]))
    // A write that never finished, and one under way.
    const dir = path.dirname(cache.fileOf('GET a /old'))
    await fs.writeFile(path.join(dir, 'abandoned.1234.tmp'), 'x')
    const old = new Date(Date.now() - 5 * 60000)
    await fs.utimes(path.join(dir, 'abandoned.1234.tmp'), old, old)
    await fs.writeFile(path.join(dir, 'writing.5678.tmp'), 'x')
    assert.deepEqual(await cache.scan(), [
      { key: 'GET a /old', size: sizes['GET a /old'] },
      { key: 'GET a /middle', size: sizes['GET a /middle'] },
      { key: 'GET a /new', size: sizes['GET a /new'] }
    ])
    await assert.rejects(fs.stat(damagedFile), { code: 'ENOENT' })
    assert.deepEqual((await fs.readdir(dir)).filter((name) => name.endsWith('.tmp')), ['writing.5678.tmp'])
    assert.deepEqual(await new DiskStore(path.join(path.dirname(cache.dir), 'none')).scan(), [])
  })
})

async function fileSize (cache, key) {
  return (await fs.stat(cache.fileOf(key))).size
}
