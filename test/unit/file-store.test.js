'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { createFileStore } = require('../../lib/file-store')

describe('file store', () => {
  let dir
  let config
  before(async () => {
    dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'svr-file-store-')))
    config = {
      wwwroot: dir,
      followSymlinks: 'inside',
      fileCacheTtl: 60000,
      fileCacheSize: 1024 * 1024,
      fileCacheMaxFileSize: 64 * 1024,
      enableCompression: true,
      compressionMinSize: 10,
      dontCompress: []
    }
  })
  after(() => fs.rm(dir, { recursive: true, force: true }))

  const plain = { method: 'GET', headers: {} }
  const gzip = { method: 'GET', headers: { 'accept-encoding': 'gzip' } }

  it('holds a body once resolved, and answers for it without a promise after', async () => {
    const files = createFileStore(config)
    const file = path.join(dir, 'a.txt')
    await fs.writeFile(file, 'a'.repeat(100))
    const stat = await files.stat(file)
    assert.equal(files.held(plain, '/a.txt', file, stat), null)
    const rep = await files.resolve(plain, '/a.txt', file, stat, false)
    assert.equal(rep.status, 0)
    assert.equal(rep.body.toString(), 'a'.repeat(100))
    assert.equal(rep.coding, null)
    assert.equal(rep.negotiable, 'text/plain; charset=utf-8')
    const held = files.held(plain, '/a.txt', file, files.peekStat(file))
    assert.equal(held.body, rep.body)
    assert.equal(files.held({ method: 'GET', headers: { range: 'bytes=0-1' } }, '/a.txt', file, stat), null)
  })

  it('makes a coded body once and holds it with the file', async () => {
    const files = createFileStore(config)
    const file = path.join(dir, 'b.txt')
    await fs.writeFile(file, 'b'.repeat(100))
    const stat = await files.stat(file)
    const rep = await files.resolve(gzip, '/b.txt', file, stat, true)
    assert.equal(rep.coding.name, 'gzip')
    assert.equal(rep.sidecar, null)
    assert.equal(rep.body[0], 0x1f, 'a gzip body')
    assert.equal(files.held(gzip, '/b.txt', file, stat).body, rep.body)
  })

  it('refuses a path replaced by a directory since its stats were cached', async () => {
    const files = createFileStore(config)
    const file = path.join(dir, 'c.txt')
    await fs.writeFile(file, 'c'.repeat(100_000))
    const stat = await files.stat(file)
    await fs.rm(file)
    await fs.mkdir(file)
    assert.equal(files.peekStat(file).isFile(), true, 'the cached stats are stale')
    const rep = await files.resolve(plain, '/c.txt', file, stat, false)
    assert.equal(rep.status, 404)
    assert.equal(files.peekStat(file).isDirectory(), true, 'fresh stats are kept')
  })

  it('refuses a file reached through a link out of the webroot', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-file-store-out-'))
    try {
      await fs.writeFile(path.join(outside, 'secret.txt'), 'secret')
      const link = path.join(dir, 'secret.txt')
      await fs.symlink(path.join(outside, 'secret.txt'), link)
      const files = createFileStore(config)
      const stat = await files.stat(link)
      assert.equal((await files.resolve(plain, '/secret.txt', link, stat, true)).status, 403)
    } finally {
      await fs.rm(outside, { recursive: true, force: true })
    }
  })
})
