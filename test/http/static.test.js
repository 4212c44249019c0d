'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr, svrForNobody } = require('../helpers/server')
const { request } = require('../helpers/http')
const { requestBytes } = require('../helpers/binary-http')
const { createScope } = require('../helpers/scope')
const { requireTools } = require('../helpers/tools')

// The 6,756-byte file of the SVR.JS observations (reference Appendix A).
function bigText () {
  let text = ''
  for (let i = 0; text.length < 6756; i++) text += 'line ' + String(i).padStart(4, '0') + ': the quick brown fox\n'
  return text.slice(0, 6756)
}

const BIG = bigText()
const STRONG_ETAG = /^"[\x21\x23-\x7e]+"$/

const FILES = {
  'index.html': '<h1>root index</h1>\n',
  'big.txt': BIG,
  'data.unknownext': 'opaque bytes\n',
  'some thing.txt': 'with a space\n',
  'percent%.txt': 'with a percent sign\n',
  'assets/app.css': 'body { color: red }\n',
  'htm/index.htm': '<p>htm index</p>\n',
  'xhtml/index.xhtml': '<p>xhtml index</p>\n',
  'both/index.html': '<p>html wins</p>\n',
  'both/index.htm': '<p>htm loses</p>\n',
  'dir-named-index/index.html/placeholder.txt': 'a directory called index.html\n',
  'dir-named-index/index.htm': '<p>the regular file wins</p>\n',
  'empty-dir/.keep': ''
}

describe('static files', () => {
  const scope = createScope()
  let port
  let site

  before(async () => {
    site = await makeSite(scope, {
      workers: 1,
      dotfiles: 'allow',
      cacheControl: [
        { regex: '/^\\/assets\\//', value: 'public, max-age=31536000, immutable' },
        { regex: '/\\.html$/', value: 'no-cache' }
      ]
    }, FILES)
    // Deny read permission is no obstacle to root; other fixtures work for every user.
    await fs.symlink('loop-b', path.join(site.webroot, 'loop-a'))
    await fs.symlink('loop-a', path.join(site.webroot, 'loop-b'))
    site.hasFifo = spawnSync('mkfifo', [path.join(site.webroot, 'pipe.txt')]).status === 0
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  describe('GET /big.txt', () => {
    it('should send the whole file with its length, validators and Accept-Ranges', async () => {
      const res = await request(port, '/big.txt')
      const stat = await fs.stat(path.join(site.webroot, 'big.txt'))
      assert.equal(res.status, 200)
      assert.equal(res.body, BIG)
      assert.equal(res.headers['content-length'], '6756')
      assert.equal(res.headers['accept-ranges'], 'bytes')
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
      assert.equal(res.headers['last-modified'], stat.mtime.toUTCString())
      assert.match(res.headers.etag, STRONG_ETAG, 'a quoted strong tag, not W/')
      assert.equal(res.headers['cache-control'], undefined, 'no rule matches /big.txt')
    })

    it('should send the same headers without a body for HEAD', async () => {
      const get = await request(port, '/big.txt')
      const head = await request(port, '/big.txt', { method: 'HEAD' })
      assert.equal(head.status, 200)
      assert.equal(head.body, '')
      for (const name of ['content-length', 'content-type', 'etag', 'last-modified', 'accept-ranges']) {
        assert.equal(head.headers[name], get.headers[name], name)
      }
    })

    it('should answer a Range with 206 and the bytes asked for', async () => {
      const res = await requestBytes(port, '/big.txt', { headers: { Range: 'bytes=10-19' } })
      assert.equal(res.status, 206)
      assert.equal(res.headers['content-range'], 'bytes 10-19/6756')
      assert.equal(res.headers['content-length'], '10')
      assert.equal(res.body.toString(), BIG.slice(10, 20))
    })

    it('should answer a suffix range with the last bytes', async () => {
      const res = await requestBytes(port, '/big.txt', { headers: { Range: 'bytes=-6' } })
      assert.equal(res.status, 206)
      assert.equal(res.headers['content-range'], 'bytes 6750-6755/6756')
      assert.equal(res.body.toString(), BIG.slice(-6))
    })

    it('should send the whole file for several ranges or a malformed one (SVR.JS sent the first range)', async () => {
      for (const range of ['bytes=0-1,5-6', 'bytes=abc', 'lines=1-2']) {
        const res = await request(port, '/big.txt', { headers: { Range: range } })
        assert.equal(res.status, 200, range)
        assert.equal(res.body, BIG)
        assert.equal(res.headers['content-range'], undefined)
      }
    })

    it('should answer an unsatisfiable range with 416 and Content-Range bytes */size only', async () => {
      const res = await request(port, '/big.txt', { headers: { Range: 'bytes=99999-' } })
      assert.equal(res.status, 416)
      assert.equal(res.headers['content-range'], 'bytes */6756')
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
      assert.doesNotMatch(res.body, /line 0000/)
      for (const name of ['etag', 'last-modified', 'accept-ranges']) assert.equal(res.headers[name], undefined, name)
    })

    it('should honour If-Range only while the tag is current', async () => {
      const { headers } = await request(port, '/big.txt')
      const fresh = await request(port, '/big.txt', { headers: { Range: 'bytes=0-3', 'If-Range': headers.etag } })
      assert.equal(fresh.status, 206)
      assert.equal(fresh.body, BIG.slice(0, 4))
      const stale = await request(port, '/big.txt', { headers: { Range: 'bytes=0-3', 'If-Range': '"stale"' } })
      assert.equal(stale.status, 200)
      assert.equal(stale.body, BIG)
    })

    it('should answer If-None-Match with the current tag by 304 carrying the ETag', async () => {
      const { headers } = await request(port, '/big.txt')
      for (const value of [headers.etag, '"other", ' + headers.etag, 'W/' + headers.etag, '*']) {
        const res = await request(port, '/big.txt', { headers: { 'If-None-Match': value } })
        assert.equal(res.status, 304, value)
        assert.equal(res.body, '')
        assert.equal(res.headers.etag, headers.etag)
        assert.equal(res.headers['content-length'], undefined)
      }
      const other = await request(port, '/big.txt', { headers: { 'If-None-Match': '"other"' } })
      assert.equal(other.status, 200)
    })

    it('should compare tags as quoted strings (SVR.JS matched only the bare tag)', async () => {
      const { headers } = await request(port, '/big.txt')
      const bare = headers.etag.slice(1, -1)
      const res = await request(port, '/big.txt', { headers: { 'If-None-Match': bare } })
      assert.equal(res.status, 200)
    })

    it('should answer If-Modified-Since by 304 unless the file is newer', async () => {
      const { headers } = await request(port, '/big.txt')
      const same = await request(port, '/big.txt', { headers: { 'If-Modified-Since': headers['last-modified'] } })
      assert.equal(same.status, 304)
      const older = new Date(Date.parse(headers['last-modified']) - 60000).toUTCString()
      const changed = await request(port, '/big.txt', { headers: { 'If-Modified-Since': older } })
      assert.equal(changed.status, 200)
      assert.equal(changed.body, BIG)
    })

    it('should answer a failed If-Match or If-Unmodified-Since with 412 and no validators', async () => {
      const { headers } = await request(port, '/big.txt')
      const older = new Date(Date.parse(headers['last-modified']) - 60000).toUTCString()
      for (const [name, value] of [['If-Match', '"nope"'], ['If-Unmodified-Since', older]]) {
        const res = await request(port, '/big.txt', { headers: { [name]: value } })
        assert.equal(res.status, 412, name)
        assert.equal(res.headers.etag, undefined)
        assert.equal(res.headers['last-modified'], undefined)
        assert.doesNotMatch(res.body, /line 0000/)
      }
      const match = await request(port, '/big.txt', { headers: { 'If-Match': headers.etag } })
      assert.equal(match.status, 200)
    })
  })

  describe('index files', () => {
    it('should serve index.html for /', async () => {
      const res = await request(port, '/')
      assert.equal(res.status, 200)
      assert.equal(res.body, FILES['index.html'])
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    })

    it('should fall back to index.htm and index.xhtml', async () => {
      const htm = await request(port, '/htm/')
      assert.equal(htm.status, 200)
      assert.equal(htm.body, FILES['htm/index.htm'])
      const xhtml = await request(port, '/xhtml/')
      assert.equal(xhtml.status, 200)
      assert.equal(xhtml.body, FILES['xhtml/index.xhtml'])
      assert.equal(xhtml.headers['content-type'], 'application/xhtml+xml')
    })

    it('should prefer index.html, and take the first name that is a regular file', async () => {
      assert.equal((await request(port, '/both/')).body, FILES['both/index.html'])
      assert.equal((await request(port, '/dir-named-index/')).body, FILES['dir-named-index/index.htm'])
    })

    it('should give the index file its own validators', async () => {
      const a = await request(port, '/')
      const b = await request(port, '/index.html')
      assert.equal(a.headers.etag, b.headers.etag)
      const res = await request(port, '/', { headers: { 'If-None-Match': a.headers.etag } })
      assert.equal(res.status, 304)
    })

    it('should leave a directory without an index file to the listing stage', async () => {
      const res = await request(port, '/empty-dir/')
      // Listings are off by default.
      assert.equal(res.status, 403)
      assert.match(res.body, /Directory listing is disabled/)
      assert.equal(res.headers.etag, undefined)
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
    })
  })

  describe('Content-Type', () => {
    it('should send application/octet-stream with nosniff for an unknown extension', async () => {
      const res = await request(port, '/data.unknownext')
      assert.equal(res.status, 200)
      assert.equal(res.body, FILES['data.unknownext'])
      assert.equal(res.headers['content-type'], 'application/octet-stream')
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
    })

    it('should serve percent-encoded names', async () => {
      assert.equal((await request(port, '/some%20thing.txt')).body, FILES['some thing.txt'])
      assert.equal((await request(port, '/percent%25.txt')).body, FILES['percent%.txt'])
    })
  })

  describe('cacheControl', () => {
    it('should set the value of the first matching rule', async () => {
      const css = await request(port, '/assets/app.css')
      assert.equal(css.headers['cache-control'], 'public, max-age=31536000, immutable')
      const html = await request(port, '/index.html')
      assert.equal(html.headers['cache-control'], 'no-cache')
    })

    it('should match an index file by its own path', async () => {
      const res = await request(port, '/')
      assert.equal(res.headers['cache-control'], 'no-cache')
    })

    it('should keep Cache-Control on a 304 but never put it on an error page', async () => {
      const { headers } = await request(port, '/assets/app.css')
      const notModified = await request(port, '/assets/app.css', { headers: { 'If-None-Match': headers.etag } })
      assert.equal(notModified.status, 304)
      assert.equal(notModified.headers['cache-control'], 'public, max-age=31536000, immutable')
      const unsatisfiable = await request(port, '/assets/app.css', { headers: { Range: 'bytes=5000-' } })
      assert.equal(unsatisfiable.status, 416)
      assert.equal(unsatisfiable.headers['cache-control'], undefined)
      const missing = await request(port, '/assets/missing.css')
      assert.equal(missing.status, 404)
      assert.equal(missing.headers['cache-control'], undefined)
    })
  })

  describe('errors', () => {
    it('should answer 404 for a missing file and for a file used as a directory', async () => {
      for (const target of ['/missing.txt', '/big.txt/', '/big.txt/x']) {
        const res = await request(port, target)
        assert.equal(res.status, 404, target)
        assert.equal(res.headers.etag, undefined)
      }
    })

    it('should answer 414 for a name longer than the file system allows', async () => {
      const res = await request(port, '/' + 'a'.repeat(300))
      assert.equal(res.status, 414)
    })

    it('should answer 508 for a symlink loop', async () => {
      const res = await request(port, '/loop-a')
      assert.equal(res.status, 508)
    })

    it('should answer 501 for a FIFO instead of blocking on it', async (t) => {
      if (!site.hasFifo) return t.skip('mkfifo is not available')
      const res = await request(port, '/pipe.txt', { timeout: 3000 })
      assert.equal(res.status, 501)
    })

    it('should answer 403 for a file it may not read', async (t) => {
      // Root reads every file, so as root (as in CI) this svr runs as nobody.
      const asNobody = process.getuid() === 0
      if (asNobody && !requireTools(t, 'setpriv')) return
      const own = await makeSite(t, { workers: 1 }, { 'secret.txt': 'secret\n', 'public.txt': 'public\n' })
      await fs.chmod(path.join(own.webroot, 'secret.txt'), 0o000)
      if (asNobody) await fs.chmod(own.dir, 0o755)
      const svr = await startSvr(t, own.configFile, asNobody ? { asNobody, svr: await svrForNobody(t) } : {})
      const readable = await request(svr.port, '/public.txt')
      assert.equal(readable.status, 200)
      assert.equal(readable.body, 'public\n')
      const res = await request(svr.port, '/secret.txt')
      assert.equal(res.status, 403)
      assert.doesNotMatch(res.body, /secret\n/)
    })
  })

  describe('validators', () => {
    it('should change the ETag when the file changes, so an old tag no longer gives 304', async () => {
      const file = path.join(site.webroot, 'changing.txt')
      await fs.writeFile(file, 'version one\n')
      const first = await request(port, '/changing.txt')
      await fs.writeFile(file, 'version two\n')
      await fs.utimes(file, new Date(), new Date(Date.now() + 5000))
      const second = await request(port, '/changing.txt', { headers: { 'If-None-Match': first.headers.etag } })
      assert.equal(second.status, 200)
      assert.equal(second.body, 'version two\n')
      assert.notEqual(second.headers.etag, first.headers.etag)
    })
  })
})

describe('followSymlinks', () => {
  const scope = createScope()
  const ports = {}
  let outsideSecret

  before(async () => {
    const sites = {}
    for (const mode of ['inside', 'never', 'always']) {
      const config = mode === 'inside' ? { workers: 1 } : { workers: 1, followSymlinks: mode }
      const site = await makeSite(scope, config, {
        'real.txt': 'real file\n',
        'sub/index.html': '<p>sub index</p>\n'
      })
      const outside = path.join(site.dir, 'outside')
      await fs.mkdir(outside)
      outsideSecret = 'outside the webroot\n'
      await fs.writeFile(path.join(outside, 'secret.txt'), outsideSecret)
      await fs.writeFile(path.join(outside, 'index.html'), outsideSecret)
      await fs.symlink(path.join(outside, 'secret.txt'), path.join(site.webroot, 'link-out.txt'))
      await fs.symlink(outside, path.join(site.webroot, 'linkdir'))
      await fs.symlink('real.txt', path.join(site.webroot, 'link-in.txt'))
      await fs.symlink('sub', path.join(site.webroot, 'sub-link'))
      // A sibling whose name starts with the webroot's: ".../webrootx" begins
      // with ".../webroot" but lies outside it.
      const sibling = site.webroot + 'x'
      await fs.mkdir(sibling)
      await fs.writeFile(path.join(sibling, 'secret.txt'), outsideSecret)
      await fs.symlink(path.join('..', 'webrootx', 'secret.txt'), path.join(site.webroot, 'sibling.txt'))
      await fs.symlink(path.join('..', 'webrootx'), path.join(site.webroot, 'sibling-dir'))
      sites[mode] = site
    }
    // A webroot that is itself a link (a `current -> release` deploy) is not a link below it.
    const linked = await makeSite(scope, { workers: 1, followSymlinks: 'never' }, { 'real.txt': 'through a linked root\n' })
    await fs.rename(linked.webroot, path.join(linked.dir, 'release'))
    await fs.symlink(path.join(linked.dir, 'release'), linked.webroot)
    sites.linkedRoot = linked
    await Promise.all(Object.entries(sites).map(async ([mode, site]) => {
      ports[mode] = (await startSvr(scope, site.configFile)).port
    }))
  })
  after(() => scope.cleanup())

  async function expectRefused (port, target) {
    const res = await request(port, target)
    assert.equal(res.status, 403, target)
    assert.doesNotMatch(res.body, /outside the webroot|real file|sub index/)
  }

  it('should refuse a link out of the webroot by default ("inside")', async () => {
    await expectRefused(ports.inside, '/link-out.txt')
    await expectRefused(ports.inside, '/linkdir/')
    await expectRefused(ports.inside, '/linkdir/secret.txt')
  })

  it('should refuse a link into a sibling directory whose name extends the webroot\'s', async () => {
    await expectRefused(ports.inside, '/sibling.txt')
    await expectRefused(ports.inside, '/sibling-dir/secret.txt')
  })

  it('should follow links that stay inside the webroot by default', async () => {
    assert.equal((await request(ports.inside, '/link-in.txt')).body, 'real file\n')
    assert.equal((await request(ports.inside, '/sub-link/')).body, '<p>sub index</p>\n')
  })

  it('should refuse every link with "never", and still serve plain files', async () => {
    await expectRefused(ports.never, '/link-in.txt')
    await expectRefused(ports.never, '/sub-link/')
    await expectRefused(ports.never, '/link-out.txt')
    assert.equal((await request(ports.never, '/real.txt')).body, 'real file\n')
    assert.equal((await request(ports.never, '/sub/')).body, '<p>sub index</p>\n')
  })

  it('should follow any link with "always"', async () => {
    assert.equal((await request(ports.always, '/link-out.txt')).body, outsideSecret)
    assert.equal((await request(ports.always, '/linkdir/')).body, outsideSecret)
    assert.equal((await request(ports.always, '/link-in.txt')).body, 'real file\n')
  })

  it('should not count a linked webroot itself as a link', async () => {
    const res = await request(ports.linkedRoot, '/real.txt')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'through a linked root\n')
  })
})
