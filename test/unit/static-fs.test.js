'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { createSymlinkPolicy, rememberVerdicts } = require('../../lib/file-store/symlinks')
const { createIndexFinder } = require('../../lib/file-store/index-files')
const { createCompression } = require('../../lib/static/compression')
const { createTimedCache } = require('../../lib/util/timed-cache')

describe('static file system helpers', () => {
  let dir
  let root

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-static-'))
    root = path.join(dir, 'root')
    await fs.mkdir(path.join(root, 'sub'), { recursive: true })
    await fs.writeFile(path.join(root, 'file.txt'), 'x')
    await fs.writeFile(path.join(root, 'sub', 'index.htm'), 'x')
    await fs.writeFile(path.join(dir, 'outside.txt'), 'x')
    await fs.symlink('file.txt', path.join(root, 'in-link'))
    await fs.symlink(path.join(dir, 'outside.txt'), path.join(root, 'out-link'))
    await fs.symlink('sub', path.join(root, 'sub-link'))
  })
  after(() => fs.rm(dir, { recursive: true, force: true }))

  describe('createSymlinkPolicy(mode, root)', () => {
    it('should not check anything with "always"', () => {
      assert.equal(createSymlinkPolicy('always', root), null)
    })

    it('should follow links that stay inside with "inside"', async () => {
      const mayFollow = createSymlinkPolicy('inside', root)
      assert.equal(await mayFollow(path.join(root, 'file.txt')), true)
      assert.equal(await mayFollow(path.join(root, 'in-link')), true)
      assert.equal(await mayFollow(path.join(root, 'sub-link', 'index.htm')), true)
      assert.equal(await mayFollow(path.join(root, 'out-link')), false)
      assert.equal(await mayFollow(root), true)
    })

    it('should refuse any link below the root with "never"', async () => {
      const mayFollow = createSymlinkPolicy('never', root)
      assert.equal(await mayFollow(path.join(root, 'file.txt')), true)
      assert.equal(await mayFollow(path.join(root, 'sub') + path.sep), true)
      assert.equal(await mayFollow(path.join(root, 'in-link')), false)
      assert.equal(await mayFollow(path.join(root, 'sub-link', 'index.htm')), false)
      assert.equal(await mayFollow(path.join(root, 'out-link')), false)
    })

    it('should reject with the realpath error for a missing file', async () => {
      const mayFollow = createSymlinkPolicy('inside', root)
      await assert.rejects(mayFollow(path.join(root, 'missing')), { code: 'ENOENT' })
    })

    it('should follow the webroot link to a new target', async () => {
      const releases = [path.join(dir, 'release-1'), path.join(dir, 'release-2')]
      for (const release of releases) {
        await fs.mkdir(release)
        await fs.writeFile(path.join(release, 'page.txt'), release)
      }
      const current = path.join(dir, 'current')
      await fs.symlink(releases[0], current)
      const mayFollow = createSymlinkPolicy('never', current)
      assert.equal(await mayFollow(path.join(current, 'page.txt')), true)
      await fs.unlink(current)
      await fs.symlink(releases[1], current)
      assert.equal(await mayFollow(path.join(current, 'page.txt')), true)
    })
  })

  describe('createIndexFinder(names)', () => {
    it('should find the first name that is a regular file, and null without one', async () => {
      const findIndex = createIndexFinder(['index.html', 'index.htm'], { ttl: 1000, maxEntries: 10 })
      const found = await findIndex(path.join(root, 'sub'))
      assert.equal(found.name, 'index.htm')
      assert.equal(found.path, path.join(root, 'sub', 'index.htm'))
      assert.equal(found.stat.isFile(), true)
      assert.equal(await findIndex(root), null)
    })

    it('should notice a removed index file at once, and a new one after the ttl', async () => {
      const sub = path.join(dir, 'changing')
      await fs.mkdir(sub)
      await fs.writeFile(path.join(sub, 'index.htm'), 'x')
      const findIndex = createIndexFinder(['index.html', 'index.htm'], { ttl: 50, maxEntries: 10 })
      assert.equal((await findIndex(sub)).name, 'index.htm')
      await fs.unlink(path.join(sub, 'index.htm'))
      assert.equal(await findIndex(sub), null)
      await fs.writeFile(path.join(sub, 'index.html'), 'x')
      await new Promise((resolve) => setTimeout(resolve, 60))
      assert.equal((await findIndex(sub)).name, 'index.html')
    })
  })

  describe('createCompression(config)', () => {
    const config = { enableCompression: true, compressionMinSize: 10, dontCompress: ['/^\\/raw\\//'] }

    it('should be null when compression is off', () => {
      assert.equal(createCompression({ ...config, enableCompression: false }), null)
    })

    it('should name the Content-Type of files that may be coded only', () => {
      const { negotiableType } = createCompression(config)
      assert.equal(negotiableType('/a.txt', '/r/a.txt', 10), 'text/plain; charset=utf-8')
      assert.equal(negotiableType('/a.svg', '/r/a.svg', 100), 'image/svg+xml')
      assert.equal(negotiableType('/a.txt', '/r/a.txt', 9), null)
      assert.equal(negotiableType('/raw/a.txt', '/r/raw/a.txt', 100), null)
      for (const name of ['a.png', 'a.gz', 'a.br', 'a.zip', 'a.unknownext', 'noext']) {
        assert.equal(negotiableType('/' + name, '/r/' + name, 100), null, name)
      }
    })
  })

  describe('createTimedCache()', () => {
    it('should forget entries after the ttl and the oldest beyond max', async () => {
      const map = createTimedCache({ ttl: 30, max: 2 })
      map.set('a', 1)
      map.set('b', 2)
      map.set('c', 3)
      assert.equal(map.get('a'), undefined)
      assert.equal(map.get('c'), 3)
      await new Promise((resolve) => setTimeout(resolve, 40))
      assert.equal(map.get('c'), undefined)
    })

    it('should count an entry set again from its new setting, for its age and its place', () => {
      const clock = { t: 0, now () { return this.t } }
      const map = createTimedCache({ ttl: 100, max: 2, clock })
      map.set('a', 1)
      map.set('b', 2)
      clock.t = 60
      map.set('a', 3)
      map.set('c', 4)
      // b, set longest ago, made room; a's age counts from its second setting.
      assert.deepEqual([map.get('a'), map.get('b'), map.get('c'), map.size], [3, undefined, 4, 2])
      clock.t = 150
      assert.deepEqual([map.peek('a'), map.get('c')], [3, 4])
      // Served up to its ttl, as lru-cache served it.
      clock.t = 160
      assert.equal(map.get('a'), 3)
      clock.t = 161
      assert.deepEqual([map.peek('a'), map.get('a'), map.size], [undefined, undefined, 1])
    })

    it('should keep nothing with a ttl of 0', () => {
      const map = createTimedCache({ ttl: 0, max: 2 })
      map.set('a', 1)
      assert.equal(map.get('a'), undefined)
      assert.equal(map.size, 0)
    })
  })
})

describe('rememberVerdicts', () => {
  const fileA = { dev: 1, ino: 10, ctimeMs: 5 }

  it('asks the policy once per path and file within the TTL, and errors every time', async () => {
    const asked = []
    const policy = async (file) => {
      asked.push(file)
      if (file === '/broken') throw Object.assign(new Error('loop'), { code: 'ELOOP' })
      return file === '/yes'
    }
    const remembered = rememberVerdicts(policy, { ttl: 60000, maxEntries: 10 })
    assert.equal(await remembered('/yes', fileA), true)
    assert.equal(await remembered('/yes', fileA), true)
    assert.equal(await remembered('/no', fileA), false)
    assert.equal(await remembered('/no', fileA), false)
    await assert.rejects(remembered('/broken', fileA), { code: 'ELOOP' })
    await assert.rejects(remembered('/broken', fileA), { code: 'ELOOP' })
    assert.deepEqual(asked, ['/yes', '/no', '/broken', '/broken'])
    assert.equal(rememberVerdicts(null, { ttl: 1000, maxEntries: 10 }), null)
  })

  it('asks again when the path leads to another file, or when no stats are given', async () => {
    let count = 0
    const remembered = rememberVerdicts(async () => ++count === 1, { ttl: 60000, maxEntries: 10 })
    assert.equal(await remembered('/f', fileA), true)
    // Replaced by a link to a file elsewhere: the stats are the target's.
    assert.equal(await remembered('/f', { dev: 1, ino: 99, ctimeMs: 5 }), false)
    assert.equal(await remembered('/f', { dev: 2, ino: 10, ctimeMs: 5 }), false)
    // The same inode number, reused by a new file.
    assert.equal(await remembered('/f', { dev: 1, ino: 10, ctimeMs: 6 }), false)
    assert.equal(await remembered('/g'), false)
    assert.equal(count, 5)
  })

  it('asks again once the TTL has passed, and every time with a TTL of 0', async () => {
    let count = 0
    const remembered = rememberVerdicts(async () => ++count % 2 === 1, { ttl: 20, maxEntries: 10 })
    assert.equal(await remembered('/f', fileA), true)
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(await remembered('/f', fileA), false)
    let asked = 0
    const never = rememberVerdicts(async () => { asked++; return true }, { ttl: 0, maxEntries: 10 })
    await never('/f', fileA)
    await never('/f', fileA)
    assert.equal(asked, 2)
  })
})
