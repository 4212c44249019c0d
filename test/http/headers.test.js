'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')
const { version } = require('../../package.json')

const FILES = {
  'index.html': '<h1>test index</h1>\n',
  'file.txt': '0123456789abcdef\n',
  'dir/inner.txt': 'inner\n'
}

describe('customHeaders and Server', () => {
  const scope = createScope()
  let port
  let exposed

  before(async () => {
    const site = await makeSite(scope, {
      workers: 1,
      customHeaders: { 'X-Test': '1 {path}', 'X-Static': 'yes', Server: 'not-this' },
      customHeadersVHost: [
        { host: 'a.example', headers: { 'X-Host': 'a', 'x-test': 'vhost {path} and {path}' } },
        { ip: '192.0.2.1', headers: { 'X-Ip': 'never' } }
      ],
      rewriteMap: [
        { definingRegex: '/^\\/renamed/', replacements: [{ regex: '/^\\/renamed/', replacement: '/file.txt' }] },
        { definingRegex: '/^\\/escape$/', replacements: [{ regex: '/.*/', replacement: '/../x' }] }
      ]
    }, FILES)
    port = (await startSvr(scope, site.configFile)).port
    const other = await makeSite(scope, {
      workers: 1,
      exposeServerVersion: true,
      rewriteDirtyURLs: false,
      customHeaders: { 'X-Test': '1 {path}' }
    }, FILES)
    exposed = (await startSvr(scope, other.configFile)).port
  })
  after(() => scope.cleanup())

  function assertCustom (res, path) {
    assert.equal(res.headers['x-test'], '1 ' + path)
    assert.equal(res.headers['x-static'], 'yes')
    assert.equal(res.headers.server, 'svr')
    assert.equal(res.headers['x-ip'], undefined)
  }

  it('should be on a 200 with the request URL in {path}', async () => {
    const res = await request(port, '/file.txt?a=1')
    assert.equal(res.status, 200)
    assertCustom(res, '/file.txt?a=1')
  })

  it('should be on a 206 and a 304', async () => {
    const partial = await request(port, '/file.txt', { headers: { range: 'bytes=0-3' } })
    assert.equal(partial.status, 206)
    assert.equal(partial.body, '0123')
    assertCustom(partial, '/file.txt')

    const first = await request(port, '/file.txt')
    assert.ok(first.headers.etag, 'the file has an ETag')
    const cached = await request(port, '/file.txt', { headers: { 'if-none-match': first.headers.etag } })
    assert.equal(cached.status, 304)
    assertCustom(cached, '/file.txt')
  })

  it('should be on redirects', async () => {
    const res = await request(port, '/dir?x=1')
    assert.equal(res.status, 301)
    assertCustom(res, '/dir?x=1')
  })

  it('should be on 400, 403 and 404 error pages', async () => {
    const bad = await request(port, '/x%ZZ')
    assert.equal(bad.status, 400)
    assertCustom(bad, '/x%ZZ')
    const forbidden = await request(port, '/escape')
    assert.equal(forbidden.status, 403)
    assertCustom(forbidden, '/escape')
    const missing = await request(port, '/missing?q')
    assert.equal(missing.status, 404)
    assertCustom(missing, '/missing?q')
  })

  it('should name the clean and the rewritten URL in {path}', async () => {
    assertCustom(await request(port, '/a/../file.txt?q'), '/file.txt?q')
    const rewritten = await request(port, '/renamed?x')
    assert.equal(rewritten.body, '0123456789abcdef\n')
    assertCustom(rewritten, '/file.txt?x')
  })

  it('should add a vhost entry only for its host, replacing headers of the same name', async () => {
    const own = await request(port, '/file.txt', { headers: { host: 'A.example:8080' } })
    assert.equal(own.headers['x-host'], 'a')
    assert.equal(own.headers['x-test'], 'vhost /file.txt and /file.txt')
    assert.equal(own.headers['x-static'], 'yes')
    const other = await request(port, '/file.txt', { headers: { host: 'b.example' } })
    assert.equal(other.headers['x-host'], undefined)
    assertCustom(other, '/file.txt')
    const redirected = await request(port, '/renamed', { headers: { host: 'a.example' } })
    assert.equal(redirected.headers['x-test'], 'vhost /file.txt and /file.txt')
  })

  it('should send the full version only with exposeServerVersion', async () => {
    const res = await request(exposed, '/file.txt')
    assert.equal(res.headers.server, 'svr/' + version + ' (' + require('node:os').type() + '; Node.js/' + process.version + ')')
    assert.equal(res.headers['x-test'], '1 /file.txt')
  })

  it('should name the dirty URL on a sanitising redirect', async () => {
    const res = await request(exposed, '/a/../file.txt')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/file.txt')
    assert.equal(res.headers['x-test'], '1 /a/../file.txt')
  })
})
