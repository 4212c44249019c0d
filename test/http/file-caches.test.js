'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

// The stat and body caches keep what they learnt for 1 s; a little more
// than that is waited for a change to show.
const PAST_TTL_MS = 1300

describe('stat and small-file caches', () => {
  const scope = createScope()
  let port
  let site

  before(async () => {
    site = await makeSite(scope, { workers: 1 }, {
      'index.html': '<h1>index</h1>\n',
      'page.txt': 'first version\n',
      'gone.txt': 'about to be deleted\n',
      'dir/index.html': '<p>dir</p>\n'
    })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  function consistent (res) {
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), 'length and body agree')
  }

  it('serves a changed file fresh once the TTL has passed, and never a torn one', async () => {
    const file = path.join(site.webroot, 'page.txt')
    const first = await request(port, '/page.txt')
    assert.equal(first.body, 'first version\n')
    await request(port, '/page.txt')
    await fs.writeFile(file, 'the second, longer version\n')
    // Within the TTL either version may come, but whole, with its own validators.
    const during = await request(port, '/page.txt')
    assert.equal(during.status, 200)
    consistent(during)
    assert.ok(['first version\n', 'the second, longer version\n'].includes(during.body))
    if (during.body === first.body) assert.equal(during.headers.etag, first.headers.etag)
    else assert.notEqual(during.headers.etag, first.headers.etag)
    await sleep(PAST_TTL_MS)
    const after = await request(port, '/page.txt')
    assert.equal(after.body, 'the second, longer version\n')
    consistent(after)
    assert.notEqual(after.headers.etag, first.headers.etag)
    const stat = await fs.stat(file)
    assert.equal(after.headers['last-modified'], stat.mtime.toUTCString())
  })

  it('answers 404 for a deleted file once the TTL has passed', async () => {
    assert.equal((await request(port, '/gone.txt')).status, 200)
    await fs.rm(path.join(site.webroot, 'gone.txt'))
    await sleep(PAST_TTL_MS)
    assert.equal((await request(port, '/gone.txt')).status, 404)
  })

  it('finds a file created after a 404 once the TTL has passed', async () => {
    assert.equal((await request(port, '/new.txt')).status, 404)
    await fs.writeFile(path.join(site.webroot, 'new.txt'), 'new\n')
    await sleep(PAST_TTL_MS)
    const res = await request(port, '/new.txt')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'new\n')
  })

  it('still answers ranges and preconditions of a file it holds in memory', async () => {
    const plain = await request(port, '/index.html')
    const again = await request(port, '/index.html')
    assert.equal(again.body, plain.body)
    assert.equal(again.headers.etag, plain.headers.etag)
    const range = await request(port, '/index.html', { headers: { Range: 'bytes=1-3' } })
    assert.equal(range.status, 206)
    assert.equal(range.body, 'h1>')
    const notModified = await request(port, '/index.html', { headers: { 'If-None-Match': plain.headers.etag } })
    assert.equal(notModified.status, 304)
    const head = await request(port, '/index.html', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], plain.headers['content-length'])
  })

  it('redirects a directory created after a 404 once the TTL has passed', async () => {
    assert.equal((await request(port, '/later')).status, 404)
    await fs.mkdir(path.join(site.webroot, 'later'))
    await sleep(PAST_TTL_MS)
    const res = await request(port, '/later')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/later/')
  })
})

describe('cached symlink verdicts', () => {
  const scope = createScope()
  let port
  let site
  let secret

  before(async () => {
    site = await makeSite(scope, { workers: 1 }, {
      'held.txt': 'public, held in memory\n',
      'big.bin': Buffer.alloc(2 * 1024 * 1024, 'b'),
      'other.txt': 'public\n'
    })
    // Outside the webroot: what a link swapped in must never reach.
    secret = path.join(site.dir, 'secret.txt')
    await fs.writeFile(secret, 'SECRET outside the webroot\n')
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  async function swapForLink (name) {
    const file = path.join(site.webroot, name)
    await fs.rm(file)
    await fs.symlink(secret, file)
  }

  function refused (res) {
    assert.ok(!res.body.includes('SECRET'), 'the target outside the webroot leaked: ' + res.status)
    assert.equal(res.status, 403)
  }

  it('refuses a held file replaced by a link out of the webroot, for a range request', async () => {
    assert.equal((await request(port, '/held.txt')).status, 200)
    assert.equal((await request(port, '/held.txt')).status, 200)
    await swapForLink('held.txt')
    refused(await request(port, '/held.txt', { headers: { Range: 'bytes=0-5' } }))
    refused(await request(port, '/held.txt', { headers: { 'If-None-Match': '"x"' } }))
  })

  it('refuses a big file replaced by a link out of the webroot', async () => {
    assert.equal((await request(port, '/big.bin')).status, 200)
    await swapForLink('big.bin')
    refused(await request(port, '/big.bin'))
  })

  it('refuses a file seen but not held, replaced by a link out of the webroot', async () => {
    assert.equal((await request(port, '/other.txt', { headers: { Range: 'bytes=0-1' } })).status, 206)
    await swapForLink('other.txt')
    refused(await request(port, '/other.txt'))
  })
})

describe('fileCacheTtl', () => {
  it('with 0, serves a file created right after a 404, changed or deleted at once', async (t) => {
    const site = await makeSite(t, { workers: 1, fileCacheTtl: 0 }, {
      'page.txt': 'first\n',
      'gone.txt': 'going\n',
      'dir/readme.txt': 'no index here\n'
    })
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/new.txt')).status, 404)
    await fs.writeFile(path.join(site.webroot, 'new.txt'), 'new\n')
    const created = await request(port, '/new.txt')
    assert.equal(created.status, 200)
    assert.equal(created.body, 'new\n')

    assert.equal((await request(port, '/page.txt')).body, 'first\n')
    assert.equal((await request(port, '/page.txt')).body, 'first\n')
    await fs.writeFile(path.join(site.webroot, 'page.txt'), 'second, longer\n')
    assert.equal((await request(port, '/page.txt')).body, 'second, longer\n')

    assert.equal((await request(port, '/gone.txt')).status, 200)
    await fs.rm(path.join(site.webroot, 'gone.txt'))
    assert.equal((await request(port, '/gone.txt')).status, 404)

    assert.equal((await request(port, '/dir/')).status, 403, 'no index file, listings off')
    await fs.writeFile(path.join(site.webroot, 'dir', 'index.html'), '<p>index</p>\n')
    assert.equal((await request(port, '/dir/')).body, '<p>index</p>\n')

    assert.equal((await request(port, '/later')).status, 404)
    await fs.mkdir(path.join(site.webroot, 'later'))
    assert.equal((await request(port, '/later')).status, 301)

    // Error page templates follow the same policy.
    await fs.writeFile(path.join(site.webroot, '404.html'), 'one\n')
    assert.equal((await request(port, '/nothing')).body, 'one\n')
    await fs.writeFile(path.join(site.webroot, '404.html'), 'two\n')
    const edited = await request(port, '/nothing')
    assert.equal(edited.status, 404)
    assert.equal(edited.body, 'two\n')
  })

  it('with 0, refuses a file replaced by a link out of the webroot at once', async (t) => {
    const site = await makeSite(t, { workers: 1, fileCacheTtl: 0 }, { 'a.txt': 'public\n' })
    const secret = path.join(site.dir, 'secret.txt')
    await fs.writeFile(secret, 'SECRET\n')
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/a.txt')).status, 200)
    assert.equal((await request(port, '/a.txt')).status, 200)
    await fs.rm(path.join(site.webroot, 'a.txt'))
    await fs.symlink(secret, path.join(site.webroot, 'a.txt'))
    const res = await request(port, '/a.txt')
    assert.equal(res.status, 403)
  })

  it('by default, serves a file created after a 404 within about 1.5 s', async (t) => {
    const site = await makeSite(t, { workers: 1 }, {})
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/new.txt')).status, 404)
    await fs.writeFile(path.join(site.webroot, 'new.txt'), 'new\n')
    const start = Date.now()
    let res = await request(port, '/new.txt')
    // Within the TTL the cached absence may still answer; not for long.
    while (res.status === 404 && Date.now() - start < 3000) {
      await sleep(50)
      res = await request(port, '/new.txt')
    }
    assert.equal(res.status, 200)
    assert.ok(Date.now() - start < 1500, 'served after ' + (Date.now() - start) + ' ms')
  })

  it('follows fileCacheSize 0: nothing held, every response read from disk', async (t) => {
    const site = await makeSite(t, { workers: 1, fileCacheSize: 0 }, { 'a.txt': 'one\n' })
    const { port } = await startSvr(t, site.configFile)
    const first = await request(port, '/a.txt')
    assert.equal(first.body, 'one\n')
    assert.equal(first.headers['accept-ranges'], 'bytes')
    assert.equal((await request(port, '/a.txt', { method: 'HEAD' })).headers['content-length'], '4')
  })
})

describe('a held file answers as send does', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, {
      workers: 1,
      customHeaders: { 'X-Site': 'yes', Vary: 'Origin' },
      cacheControl: [{ regex: '/\\.css$/', value: 'public, max-age=60' }]
    }, {
      'a.txt': 'text\n',
      'b.html': '<p>html</p>\n',
      'c.css': 'p { color: red }\n',
      'd.unknownext': 'bytes\n',
      'e.json': '{"compressible": "' + 'x'.repeat(2000) + '"}\n',
      'empty.txt': '',
      'dir/index.html': '<p>index</p>\n'
    })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  // What may differ between two responses a moment apart.
  const VOLATILE = new Set(['date', 'x-request-id', 'connection', 'keep-alive'])

  function fields (res) {
    return Object.entries(res.headers).filter(([name]) => !VOLATILE.has(name))
  }

  for (const [target, method] of [['/a.txt', 'GET'], ['/b.html', 'GET'], ['/c.css', 'GET'], ['/d.unknownext', 'GET'],
    ['/e.json', 'GET'], ['/empty.txt', 'GET'], ['/dir/', 'GET'], ['/a.txt', 'HEAD'], ['/e.json', 'HEAD']]) {
    it(method + ' ' + target, async () => {
      // A precondition that never holds takes the request through send.
      const streamed = await request(port, target, { method, headers: { 'If-None-Match': '"no-such-tag"' } })
      await request(port, target, { method })
      const held = await request(port, target, { method })
      assert.equal(held.status, streamed.status)
      assert.equal(held.body, streamed.body)
      assert.deepEqual(fields(held), fields(streamed))
    })
  }
})

describe('file system errors are not remembered', () => {
  it('answers a link loop 508 each time, and the file that replaces it at once', async (t) => {
    const site = await makeSite(t, { workers: 1 }, {})
    await fs.symlink('loop-b', path.join(site.webroot, 'loop-a'))
    await fs.symlink('loop-a', path.join(site.webroot, 'loop-b'))
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/loop-a')).status, 508)
    assert.equal((await request(port, '/loop-a')).status, 508)
    await fs.rm(path.join(site.webroot, 'loop-a'))
    await fs.writeFile(path.join(site.webroot, 'loop-a'), 'fixed\n')
    const res = await request(port, '/loop-a')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'fixed\n')
  })
})

describe('answers that outlive the TTL are built from fresh stats', () => {
  it('does not redirect to a directory that a file has just replaced', async (t) => {
    const site = await makeSite(t, { workers: 1 }, { 'was-dir/inner.txt': 'inner\n' })
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/was-dir')).status, 301)
    await fs.rm(path.join(site.webroot, 'was-dir'), { recursive: true })
    await fs.writeFile(path.join(site.webroot, 'was-dir'), 'now a file\n')
    // A 301 is kept by browsers for good: it must not come from stale stats.
    const res = await request(port, '/was-dir')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'now a file\n')
    assert.equal(res.headers.location, undefined)
  })

  it('answers a file replaced by a directory or a FIFO within the TTL without a 500 or a hang', async (t) => {
    const big = Buffer.alloc(2 * 1024 * 1024, 'b')
    const site = await makeSite(t, { workers: 1 }, { 'to-dir.bin': big, 'to-fifo.bin': big })
    const { port } = await startSvr(t, site.configFile)
    assert.equal((await request(port, '/to-dir.bin')).status, 200)
    assert.equal((await request(port, '/to-fifo.bin')).status, 200)
    await fs.rm(path.join(site.webroot, 'to-dir.bin'))
    await fs.mkdir(path.join(site.webroot, 'to-dir.bin'))
    await fs.rm(path.join(site.webroot, 'to-fifo.bin'))
    execFileSync('mkfifo', [path.join(site.webroot, 'to-fifo.bin')])
    const dir = await request(port, '/to-dir.bin')
    assert.ok(dir.status < 500, 'status ' + dir.status)
    const fifo = await request(port, '/to-fifo.bin', { timeout: 3000 })
    assert.ok(fifo.status < 500 || fifo.status === 501, 'status ' + fifo.status)
  })
})
