'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { createFileCache } = require('../../lib/util/file-cache')

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-file-cache-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

describe('createFileCache', () => {
  it('should read a file at most once per ttl', async (t) => {
    const file = path.join(await tempDir(t), 'page.html')
    await fs.writeFile(file, 'one')
    const cache = createFileCache({ ttl: 150 })
    assert.equal(await cache.get(file), 'one')
    await fs.writeFile(file, 'two')
    assert.equal(await cache.get(file), 'one', 'served from memory within the ttl')
    await sleep(200)
    assert.equal(await cache.get(file), 'two')
  })

  it('should answer null for a missing file and notice when it appears', async (t) => {
    const file = path.join(await tempDir(t), 'later.html')
    const cache = createFileCache({ ttl: 50 })
    assert.equal(await cache.get(file), null)
    await fs.writeFile(file, 'here')
    await sleep(80)
    assert.equal(await cache.get(file), 'here')
  })

  it('should peek at settled reads only, within the ttl, and never at a failed one', async (t) => {
    const dir = await tempDir(t)
    const file = path.join(dir, 'page.html')
    await fs.writeFile(file, 'text')
    const cache = createFileCache({ ttl: 100 })
    assert.equal(cache.peek(file), undefined, 'not read yet')
    const pending = cache.get(file)
    assert.equal(cache.peek(file), undefined, 'still being read')
    await pending
    assert.equal(cache.peek(file), 'text')
    await cache.get(path.join(dir, 'absent'))
    assert.equal(cache.peek(path.join(dir, 'absent')), null)
    await assert.rejects(cache.get(dir), { code: 'EISDIR' })
    assert.equal(cache.peek(dir), undefined)
    await sleep(150)
    assert.equal(cache.peek(file), undefined, 'older than the ttl')
  })

  it('should reject for a directory and remember the failure for the ttl', async (t) => {
    const dir = await tempDir(t)
    const target = path.join(dir, 'template')
    await fs.mkdir(target)
    const cache = createFileCache({ ttl: 150 })
    const first = cache.get(target)
    await assert.rejects(first, { code: 'EISDIR' })
    await fs.rm(target, { recursive: true })
    await fs.writeFile(target, 'fixed')
    assert.equal(cache.get(target), first, 'the same failed read within the ttl')
    await sleep(200)
    assert.equal(await cache.get(target), 'fixed')
  })

  it('should keep no more than maxEntries files', async (t) => {
    const dir = await tempDir(t)
    const cache = createFileCache({ ttl: 10000, maxEntries: 2 })
    for (const name of ['a', 'b', 'c']) {
      await fs.writeFile(path.join(dir, name), name)
      assert.equal(await cache.get(path.join(dir, name)), name)
    }
    await fs.writeFile(path.join(dir, 'a'), 'a2')
    await fs.writeFile(path.join(dir, 'c'), 'c2')
    assert.equal(await cache.get(path.join(dir, 'a')), 'a2', 'the oldest entry was dropped')
    assert.equal(await cache.get(path.join(dir, 'c')), 'c', 'a recent entry was kept')
  })
})
