'use strict'

// Every vhost-scoped setting of one request comes from the site resolved
// for its host name and local address (lib/pipeline/site.js): one server, several
// hosts, each seeing its own headers, rules, error pages and listing switch.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

const FILES = {
  'b.txt': 'for b\n',
  'a404.html': 'A404 {path}',
  'dir/inner.txt': 'inner\n'
}

describe('the site of a request', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, {
      workers: 1,
      healthPath: '/healthz',
      customHeaders: { 'X-Path': 'at {path}' },
      customHeadersVHost: [{ host: '*.a.test', headers: { 'X-Site': 'a' } }],
      enableDirectoryListing: false,
      enableDirectoryListingVHost: [{ host: 'a.test', enabled: true }],
      errorPages: [{ scode: 404, path: 'a404.html', host: '*.a.test' }],
      rewriteMap: [{ host: 'b.test', definingRegex: '/^\\/page$/', replacements: [{ regex: '/^\\/page$/', replacement: '/b.txt' }] }],
      nonStandardCodes: [{ host: '*.a.test', url: '/secret', scode: 403 }]
    }, FILES)
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  const get = (host, path, method = 'GET') => request(port, path, { method, headers: { host } })

  it('should give the apex and a subdomain of a wildcard entry its headers, rules and error pages', async () => {
    for (const host of ['a.test', 'WWW.A.test.:8080']) {
      const secret = await get(host, '/secret')
      assert.equal(secret.status, 403)
      assert.equal(secret.headers['x-site'], 'a')
      assert.equal(secret.headers['x-path'], 'at /secret')
      const missing = await get(host, '/missing?q')
      assert.equal(missing.status, 404)
      assert.equal(missing.body, 'A404 /missing?q')
      assert.equal(missing.headers['x-path'], 'at /missing?q')
    }
  })

  it('should keep another host out of them, and give it its own rewrite', async () => {
    const secret = await get('b.test', '/secret')
    assert.equal(secret.status, 404)
    assert.equal(secret.headers['x-site'], undefined)
    assert.match(secret.body, /<title>404 Not Found<\/title>/)
    const page = await get('b.test', '/page')
    assert.equal(page.status, 200)
    assert.equal(page.body, 'for b\n')
    assert.equal(page.headers['x-path'], 'at /b.txt')
    assert.equal((await get('c.test', '/page')).status, 404)
  })

  it('should list a directory only for the exact host of the listing entry', async () => {
    const listed = await get('a.test', '/dir/')
    assert.equal(listed.status, 200)
    assert.match(listed.body, /inner\.txt/)
    assert.equal((await get('www.a.test', '/dir/')).status, 403)
    assert.equal((await get('b.test', '/dir/')).status, 403)
  })

  it('should name the URL in {path} on answers made before the URL is final', async () => {
    const health = await get('a.test', '/healthz')
    assert.equal(health.status, 200)
    assert.equal(health.headers['x-path'], 'at /healthz')
    const options = await get('a.test', '*', 'OPTIONS')
    assert.equal(options.status, 204)
    assert.equal(options.headers['x-path'], 'at *')
    assert.equal(options.headers['x-site'], 'a')
  })
})
