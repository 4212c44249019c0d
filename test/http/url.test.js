'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const fc = require('fast-check')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')

const FILES = {
  'index.html': '<h1>test index</h1>\n',
  'file.txt': 'plain file\n',
  'config.json': '{"served": "config"}\n',
  'test x.txt': 'with a space\n',
  'café.txt': 'unicode name\n',
  'dir/inner.txt': 'inner\n'
}

// `{path}` shows the URL the later stages see.
const X_PATH = { 'X-Path': '{path}' }

async function startSite (scope, config, files = FILES) {
  const site = await makeSite(scope, { workers: 1, customHeaders: X_PATH, ...config }, files)
  const svr = await startSvr(scope, site.configFile)
  return { site, port: svr.port }
}

/** A `Location` a browser would keep on this origin: one `/`, then not a second `/` or `\`. */
function assertSameOrigin (location) {
  assert.match(location, /^\/(?![/\\])/, 'relative, not protocol-relative: ' + location)
}

/** What every stage after sanitising must see: no dot segment, no backslash, no `//`. */
function assertCleanUrl (url) {
  const query = url.indexOf('?')
  const decoded = decodeURIComponent(query === -1 ? url : url.slice(0, query))
  assert.match(decoded, /^\/(?!\/)/, url)
  assert.ok(!decoded.includes('\\') && !decoded.includes('\0'), url)
  for (const segment of decoded.split('/')) assert.ok(segment !== '.' && segment !== '..', url)
}

describe('path sanitising', () => {
  describe('when rewriteDirtyURLs is false', () => {
    const scope = createScope()
    let port
    before(async () => { ({ port } = await startSite(scope, { rewriteDirtyURLs: false })) })
    after(() => scope.cleanup())

    const REDIRECTS = [
      ['/a/../index.html?x=1', '/index.html?x=1'],
      ['//index.html', '/index.html'],
      ['/index.html.', '/index.html'],
      ['/conf%69g.json', '/config.json'],
      ['/%2e%2e/%2e%2e/etc/passwd', '/etc/passwd'],
      ['/..%2f..%2fetc', '/etc'],
      ['/a%5c..%5cb', '/b'],
      ['/a\\..\\b', '/b'],
      ['/a%00b', '/ab'],
      ['/a/.../b', '/a/b'],
      ['/%7e', '/~'],
      ['/test<x>', '/test%3Cx%3E'],
      ['/a"b^c`d{e|f}', '/a%22b%5Ec%60d%7Be%7Cf%7D']
    ]
    for (const [target, location] of REDIRECTS) {
      it(`should redirect ${target} to ${location}`, async () => {
        const res = await request(port, target)
        assert.equal(res.status, 301)
        assert.equal(res.headers.location, location)
        assert.match(res.body, /Redirecting to/)
      })
    }

    it('should never redirect to a protocol-relative Location', async () => {
      for (const target of ['//evil.example/', '/%2f%2fevil.example', '/\\evil.example', '/%5c%5cevil.example', '/.//evil.example', '/a/..//evil.example']) {
        const res = await request(port, target)
        assert.equal(res.status, 301, target)
        assertSameOrigin(res.headers.location)
        assert.equal(res.headers.location, '/evil.example' + (target.endsWith('/') ? '/' : ''), target)
      }
    })

    it('should serve a clean path without redirecting', async () => {
      const res = await request(port, '/test%20x.txt?q=%2e%2e')
      assert.equal(res.status, 200)
      assert.equal(res.body, 'with a space\n')
      // Escapes are upper-cased in the whole target, as SVR.JS does; the query is not sanitised.
      assert.equal(res.headers['x-path'], '/test%20x.txt?q=%2E%2E')
    })

    it('should not count lower-case escapes as dirty', async () => {
      const lower = await request(port, '/caf%c3%a9.txt')
      assert.equal(lower.status, 200)
      assert.equal(lower.body, 'unicode name\n')
      assert.equal(lower.headers['x-path'], '/caf%C3%A9.txt')
    })
  })

  describe('when rewriteDirtyURLs is true (the default)', () => {
    const scope = createScope()
    let port
    before(async () => { ({ port } = await startSite(scope, {})) })
    after(() => scope.cleanup())

    it('should serve the clean path and show it to later stages', async () => {
      for (const target of ['/a/../index.html', '//index.html', '/index.html.', '/%69ndex.html', '/./index.html']) {
        const res = await request(port, target + '?q=1')
        assert.equal(res.status, 200, target)
        assert.equal(res.body, '<h1>test index</h1>\n', target)
        assert.equal(res.headers['x-path'], '/index.html?q=1', target)
        assert.equal(res.headers.location, undefined)
      }
    })

    it('should resolve /conf%69g.json to /config.json', async () => {
      const res = await request(port, '/conf%69g.json')
      assert.equal(res.headers['x-path'], '/config.json')
      // The configuration is beside the webroot; this config.json is content.
      assert.equal(res.status, 200)
      assert.equal(res.body, '{"served": "config"}\n')
    })

    it('should keep encoded traversal inside the webroot', async () => {
      for (const target of ['/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2f..%2fetc/passwd', '/%5c..%5c..%5cetc/passwd']) {
        const res = await request(port, target)
        assert.equal(res.status, 404, target)
        assert.equal(res.headers['x-path'], '/etc/passwd', target)
      }
    })
  })

  describe('with malformed escapes', () => {
    const scope = createScope()
    let redirecting
    let rewriting
    before(async () => {
      redirecting = (await startSite(scope, { rewriteDirtyURLs: false })).port
      rewriting = (await startSite(scope, { rewriteDirtyURLs: true })).port
    })
    after(() => scope.cleanup())

    it('should answer 400 in both modes', async () => {
      const targets = ['/%c0%af', '/x%ZZ', '/x%', '/x%4', '/%e2%82', '/%82', '/%ed%a0%80', '/%FF', '/a/../%c0%af']
      for (const port of [redirecting, rewriting]) {
        for (const target of targets) {
          const res = await request(port, target)
          assert.equal(res.status, 400, target)
          assert.match(res.body, /<title>400 Bad Request<\/title>/)
          assert.equal(res.headers.location, undefined)
        }
      }
    })

    it('should not judge the query string', async () => {
      const res = await request(rewriting, '/file.txt?bad=%ZZ%c0')
      assert.equal(res.status, 200)
      assert.equal(res.body, 'plain file\n')
    })
  })

  describe('when allowDoubleSlashes is true', () => {
    const scope = createScope()
    let redirecting
    let rewriting
    before(async () => {
      redirecting = (await startSite(scope, { rewriteDirtyURLs: false, allowDoubleSlashes: true })).port
      rewriting = (await startSite(scope, { allowDoubleSlashes: true })).port
    })
    after(() => scope.cleanup())

    it('should keep // and collapse longer runs', async () => {
      const kept = await request(rewriting, '//index.html')
      assert.equal(kept.status, 200)
      assert.equal(kept.headers['x-path'], '//index.html')
      const collapsed = await request(rewriting, '/dir///inner.txt')
      assert.equal(collapsed.status, 200)
      assert.equal(collapsed.headers['x-path'], '/dir//inner.txt')
    })

    it('should collapse the leading run of a redirect Location', async () => {
      for (const target of ['///evil.example', '/%2f%2fevil.example', '///a/../evil.example']) {
        const res = await request(redirecting, target)
        assert.equal(res.status, 301, target)
        assert.equal(res.headers.location, '/evil.example', target)
      }
      const inner = await request(redirecting, '/a///b')
      assert.equal(inner.headers.location, '/a//b')
    })
  })
})

describe('trailing-slash redirect', () => {
  describe('when enabled (the default)', () => {
    const scope = createScope()
    let port
    let doubleSlashes
    before(async () => {
      port = (await startSite(scope, {})).port
      doubleSlashes = (await startSite(scope, { allowDoubleSlashes: true })).port
    })
    after(() => scope.cleanup())

    it('should redirect a directory to its slash form with the query kept', async () => {
      const res = await request(port, '/dir?x=1')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/dir/?x=1')
      assert.equal(res.headers['x-path'], '/dir?x=1')
    })

    it('should redirect to the path the client asked for, cleaned', async () => {
      const res = await request(port, '/d%69r/../dir?y')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/dir/?y')
    })

    it('should not redirect files or missing paths', async () => {
      assert.equal((await request(port, '/file.txt')).status, 200)
      assert.equal((await request(port, '/missing')).status, 404)
      assert.equal((await request(port, '/dir/inner.txt')).status, 200)
    })

    it('should never send a protocol-relative Location', async () => {
      const res = await request(doubleSlashes, '//dir?x=1')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/dir/?x=1')
    })
  })

  describe('when disableTrailingSlashRedirects is true', () => {
    const scope = createScope()
    let port
    before(async () => { ({ port } = await startSite(scope, { disableTrailingSlashRedirects: true })) })
    after(() => scope.cleanup())

    it('should not redirect a directory with the query kept', async () => {
      // The directory goes on to the listing stage, which is off by default.
      const res = await request(port, '/dir?x=1')
      assert.equal(res.status, 403)
      assert.equal(res.headers.location, undefined)
      assert.match(res.body, /Directory listing is disabled/)
    })
  })
})

describe('path sanitising against traversal (property)', () => {
  const scope = createScope()
  const secret = 'SECRET-' + crypto.randomBytes(16).toString('hex')
  let port

  before(async () => {
    const { site, port: bound } = await startSite(scope, {})
    port = bound
    // Outside the webroot: its parent, and a sibling whose name extends the webroot's.
    await fs.writeFile(path.join(site.dir, 'secret.txt'), secret)
    await fs.mkdir(path.join(site.dir, 'webrootx'))
    await fs.writeFile(path.join(site.dir, 'webrootx', 'secret.txt'), secret)
    await fs.writeFile(path.join(site.dir, 'config.json.bak'), secret)
  })
  after(() => scope.cleanup())

  const segment = fc.constantFrom('..', '%2e%2e', '%2E%2e', '.%2e', '%2e.', '.', '...', '%00', '%2e', '%252e%252e',
    'secret.txt', 'webroot', 'webrootx', 'config.json.bak', 'dir', 'index.html', '%e9', '%c3%a9', '%c0%ae', '..%00', '', '~')
  const separator = fc.constantFrom('/', '/', '//', '\\', '%2f', '%2F', '%5c', '%5C', '/./')
  const target = fc.array(fc.tuple(separator, segment), { minLength: 1, maxLength: 10 })
    .map((parts) => parts.map(([sep, seg]) => sep + seg).join(''))
    .map((p) => p.startsWith('/') ? p : '/' + p)

  it('should never serve a file outside the webroot nor fail with 5xx', async () => {
    await fc.assert(fc.asyncProperty(target, async (p) => {
      const res = await rawRequest(port, Buffer.from('GET ' + p + ' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
      assert.ok(res.status >= 200 && res.status < 500, p + ' -> ' + res.status)
      assert.ok(!res.raw.includes(secret), p + ' leaked the secret')
      if (res.headers.location !== undefined) assertSameOrigin(res.headers.location)
      if (res.status !== 400) assertCleanUrl(res.headers['x-path'])
    }), { numRuns: 300 })
  })
})
