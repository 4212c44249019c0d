'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

const FILE = 'the file body\n'
const ALLOW = 'GET, HEAD, OPTIONS'

describe('methods', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, { workers: 1 }, { 'index.html': '<h1>index</h1>\n', 'file.txt': FILE })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should answer OPTIONS with 204, Allow and no body', async () => {
    for (const target of ['/file.txt', '/', '/missing']) {
      const res = await request(port, target, { method: 'OPTIONS' })
      assert.equal(res.status, 204, target)
      assert.equal(res.headers.allow, ALLOW)
      assert.equal(res.body, '')
    }
  })

  it('should answer 405 with Allow to methods the built-in handlers do not serve', async () => {
    for (const method of ['PUT', 'POST', 'DELETE', 'TRACE', 'PATCH', 'PROPFIND']) {
      const res = await request(port, '/file.txt', { method, body: method === 'TRACE' ? undefined : 'x=1' })
      assert.equal(res.status, 405, method)
      assert.equal(res.headers.allow, ALLOW, method)
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
      assert.doesNotMatch(res.body, /the file body/, method + ' must not return the file')
      assert.equal(res.headers.etag, undefined)
    }
  })

  it('should refuse POST to a file rather than send it (SVR.JS 3.x sent it)', async () => {
    const res = await request(port, '/file.txt', { method: 'POST', body: 'a=b', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })
    assert.equal(res.status, 405)
  })

  it('should pass GET and HEAD on to the static files', async () => {
    const get = await request(port, '/file.txt')
    assert.equal(get.status, 200)
    assert.equal(get.body, FILE)
    const head = await request(port, '/file.txt', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(FILE)))
  })

  it('should answer 405 for a missing path too, before looking at the file system', async () => {
    const res = await request(port, '/missing', { method: 'DELETE' })
    assert.equal(res.status, 405)
    assert.equal(res.headers.allow, ALLOW)
  })
})
