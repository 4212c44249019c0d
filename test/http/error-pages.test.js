'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')
const { version } = require('../../package.json')

// A script beside config.json that produces any status on demand.
const SCRIPT = `
if (href === '/throw') throw new Error('boom <b>&')
if (href === '/code') {
  callServerError(Number(uobject.query.c))
  return
}
if (href === '/mod') {
  callServerError(503, 'my-mod/1.2')
  return
}
if (href === '/mod404') {
  callServerError(404, 'my-mod/1.2')
  return
}
`

const ALL_PLACEHOLDERS = 'M={errorMessage}|D={errorDesc}|P={path}|S={server}|C={contact}|K={stack}'

async function startSite (scope, config, files) {
  const site = await makeSite(scope, { workers: 1, ...config }, files)
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
  const svr = await startSvr(scope, site.configFile)
  return { site, port: svr.port }
}

describe('error pages', () => {
  const scope = createScope()
  let port
  let site

  before(async () => {
    ({ site, port } = await startSite(scope, {
      page404: 'custom404.html',
      serverAdministratorEmail: 'admin@example.com',
      errorPages: [
        { scode: 403, path: 'errors/host403.html', host: 'example.test' },
        { scode: 404, path: 'errors/missing.html' },
        { scode: 500, path: 'errors/all.html' },
        { scode: 409, path: 'errors/a-directory' }
      ]
    }, {
      'index.html': '<p>index</p>\n',
      'errors/host403.html': 'HOST403 {errorMessage}',
      'errors/all.html': ALL_PLACEHOLDERS,
      'errors/a-directory/placeholder': '',
      '.403': 'DOT403 {errorMessage} for {path}',
      'custom404.html': 'P404 path={path} msg={errorMessage}',
      '404.html': 'never used: page404 comes first',
      '.410': 'DOT410 {errorMessage}',
      '410.html': 'HTML410 loses to .410',
      '418.html': 'HTML418 {errorMessage}'
    }))
  })
  after(() => scope.cleanup())

  it('should use a host-scoped errorPages entry for its host only', async () => {
    const scoped = await request(port, '/.secret', { headers: { host: 'Example.test:80' } })
    assert.equal(scoped.status, 403)
    assert.equal(scoped.body, 'HOST403 403 Forbidden')
    const other = await request(port, '/.secret', { headers: { host: 'other.test' } })
    assert.equal(other.status, 403)
    assert.equal(other.body, 'DOT403 403 Forbidden for /.secret')
  })

  it('should fall back from a missing errorPages file to page404, with {path} escaped', async () => {
    const res = await request(port, '/nope?q=<script>"x"&y')
    assert.equal(res.status, 404)
    assert.equal(res.body, 'P404 path=/nope?q=&lt;script&gt;&quot;x&quot;&amp;y msg=404 Not Found')
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  })

  it('should prefer .<code> to <code>.html and use <code>.html alone', async () => {
    assert.equal((await request(port, '/code?c=410')).body, 'DOT410 410 Gone')
    const teapot = await request(port, '/code?c=418')
    assert.equal(teapot.status, 418)
    assert.equal(teapot.body, 'HTML418 418 I&#39;m a Teapot')
  })

  it('should fill in every placeholder, with the stack hidden by default', async () => {
    const res = await request(port, '/throw', { headers: { host: 'h.test:1234' } })
    assert.equal(res.status, 500)
    const fields = Object.fromEntries(res.body.split('|').map((part) => [part[0], part.slice(2)]))
    assert.equal(fields.M, '500 Internal Server Error')
    assert.equal(fields.P, '/throw')
    assert.equal(fields.S, 'svr on h.test:1234')
    assert.equal(fields.C, 'admin[at]example[dot]com')
    assert.equal(fields.K, '[error stack hidden]')
    assert.match(fields.D, /^The server met an unexpected condition\. Contact the server administrator: admin\[at\]example\[dot\]com\./)
    assert.ok(fields.D.includes('[error stack hidden]'))
    assert.ok(!res.body.includes('boom'))
  })

  it('should fall back to the built-in page, with a note, when a template cannot be read', async () => {
    const res = await request(port, '/code?c=409')
    assert.equal(res.status, 409)
    assert.match(res.body, /<title>409 Conflict<\/title>/)
    assert.match(res.body, /Additionally, an error \(EISDIR\) occurred while loading the error page/)
    assert.match(res.headers['content-security-policy'], /default-src 'none'/)
  })

  it('should answer the built-in page with the contact for a code without a template', async () => {
    const res = await request(port, '/code?c=503')
    assert.equal(res.status, 503)
    assert.match(res.body, /<h1>503 Service Unavailable<\/h1>/)
    assert.match(res.body, /Contact the server administrator: admin\[at\]example\[dot\]com\./)
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
  })

  it('should turn an unknown code into 501', async () => {
    for (const code of [299, 600, 999]) {
      const res = await request(port, '/code?c=' + code)
      assert.equal(res.status, 501, 'code ' + code)
      assert.match(res.body, /501 Not Implemented/)
    }
  })

  it('should not name the version or the mod by default', async () => {
    const res = await request(port, '/mod', { headers: { host: 'h.test' } })
    assert.equal(res.status, 503)
    assert.equal(res.headers.server, 'svr')
    assert.match(res.body, /<em>svr on h\.test<\/em>/)
    assert.ok(!res.body.includes('my-mod'))
    assert.ok(!res.body.includes(version) && !/svr\/\d/.test(res.body))
  })

  it('should send Allow with 405', async () => {
    const res = await request(port, '/index.html', { method: 'PUT', body: 'x' })
    assert.equal(res.status, 405)
    assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  })

  it('should answer HEAD with the headers only', async () => {
    const get = await request(port, '/code?c=503')
    const head = await request(port, '/code?c=503', { method: 'HEAD' })
    assert.equal(head.status, 503)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], get.headers['content-length'])
  })

  it('should not carry the validators of the representation it replaces', async () => {
    const failed = await request(port, '/index.html', { headers: { 'if-match': '"nope"' } })
    assert.equal(failed.status, 412)
    const range = await request(port, '/index.html', { headers: { range: 'bytes=9999-' } })
    assert.equal(range.status, 416)
    assert.equal(range.headers['content-range'], 'bytes */13')
    for (const res of [failed, range]) {
      assert.equal(res.headers.etag, undefined)
      assert.equal(res.headers['last-modified'], undefined)
      assert.equal(res.headers['content-encoding'], undefined)
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    }
  })

  it('should pick up an edited template within a second or two', async () => {
    await fs.writeFile(path.join(site.webroot, '418.html'), 'EDITED {errorMessage}')
    const deadline = Date.now() + 4000
    let body = ''
    while (Date.now() < deadline && !body.startsWith('EDITED')) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      body = (await request(port, '/code?c=418')).body
    }
    assert.equal(body, 'EDITED 418 I&#39;m a Teapot')
  })
})

describe('error pages with the version, the stack and mods exposed', () => {
  const scope = createScope()
  let port

  before(async () => {
    ({ port } = await startSite(scope, { stackHidden: false, exposeServerVersion: true, exposeModsInErrorPages: true }))
  })
  after(() => scope.cleanup())

  it('should show the escaped stack of a 500', async () => {
    const res = await request(port, '/throw')
    assert.equal(res.status, 500)
    assert.match(res.body, /<code>Error: boom &lt;b&gt;&amp;<br\/>(?:&nbsp;)*\s*at /)
    assert.ok(!res.body.includes('<b>&'))
  })

  it('should name the version in the Server header and the page', async () => {
    const res = await request(port, '/missing', { headers: { host: 'h.test' } })
    assert.equal(res.status, 404)
    assert.match(res.headers.server, new RegExp('^svr/' + version.replace(/\./g, '\\.') + ' \\('))
    assert.ok(res.body.includes('<em>' + res.headers.server + ' on h.test</em>'))
  })

  it('should name the mod with exposeModsInErrorPages', async () => {
    const res = await request(port, '/mod')
    assert.equal(res.status, 503)
    assert.match(res.body, /svr\/[^<]* my-mod\/1\.2 on 127\.0\.0\.1:\d+<\/em>/)
  })

  it('should name the mod on a 404 of the same Host as a plain 404 answered before', async () => {
    const plain = await request(port, '/missing', { headers: { host: 'm.test' } })
    const byMod = await request(port, '/mod404', { headers: { host: 'm.test' } })
    assert.equal(byMod.status, 404)
    assert.ok(byMod.body.includes('<em>' + plain.headers.server + ' my-mod/1.2 on m.test</em>'))
    assert.ok(plain.body.includes('<em>' + plain.headers.server + ' on m.test</em>'))
  })
})

describe('built-in error pages, rendered once per status and Host', () => {
  const scope = createScope()
  let port

  before(async () => {
    ({ port } = await startSite(scope, { serverAdministratorEmail: 'admin@example.com' }, { 'index.html': 'i\n' }))
  })
  after(() => scope.cleanup())

  it('should give each Host its own footer and each status its own page', async () => {
    const first = await request(port, '/a', { headers: { host: 'a.test' } })
    const other = await request(port, '/b', { headers: { host: 'b.test' } })
    const again = await request(port, '/c?x=1', { headers: { host: 'a.test' } })
    const forbidden = await request(port, '/.hidden', { headers: { host: 'a.test' } })
    assert.deepEqual([first.status, other.status, again.status, forbidden.status], [404, 404, 404, 403])
    assert.match(first.body, /<title>404 Not Found<\/title>.*<em>svr on a\.test<\/em>/s)
    assert.match(other.body, /<em>svr on b\.test<\/em>/)
    assert.equal(again.body, first.body)
    assert.equal(again.headers['content-length'], String(Buffer.byteLength(first.body)))
    assert.match(forbidden.body, /<h1>403 Forbidden<\/h1>.*<em>svr on a\.test<\/em>/s)
  })

  it('should escape the Host in the page it keeps', async () => {
    const res = await request(port, '/x', { headers: { host: 'a.test:1"<i>' } })
    assert.equal(res.status, 404)
    assert.ok(res.body.includes('<em>svr on a.test:1&quot;&lt;i&gt;</em>'))
  })

  it('should count the bytes of a kept page whose Host is not ASCII, the first time and the next', async () => {
    // The Host arrives as latin-1 bytes; the page names it in UTF-8, two bytes for the é.
    for (let i = 0; i < 2; i++) {
      const res = await rawRequest(port, Buffer.from('GET /z HTTP/1.1\r\nHost: caf\u00e9.test\r\nConnection: close\r\n\r\n', 'latin1'))
      assert.equal(res.status, 404)
      const body = Buffer.from(res.body, 'latin1')
      assert.ok(body.toString('utf8').includes('<em>svr on caf\u00e9.test</em>'))
      assert.equal(res.headers['content-length'], String(body.length))
    }
  })

  it('should render the page of a Host too long to keep, as any other', async () => {
    const host = 'h'.repeat(300) + '"'
    const res = await request(port, '/long', { headers: { host } })
    assert.equal(res.status, 404)
    assert.ok(res.body.includes('<em>svr on ' + 'h'.repeat(300) + '&quot;</em>'))
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)))
  })

  it('should answer HEAD of a kept page with its length and no body', async () => {
    const get = await request(port, '/y', { headers: { host: 'h.test' } })
    const head = await request(port, '/y', { method: 'HEAD', headers: { host: 'h.test' } })
    assert.equal(head.status, 404)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)))
  })

  it('should still put the request id in a 5xx page', async () => {
    const one = await request(port, '/code?c=503', { headers: { host: 'h.test' } })
    const two = await request(port, '/code?c=503', { headers: { host: 'h.test' } })
    assert.equal(one.status, 503)
    assert.ok(one.body.includes('Request ID: <code>' + one.headers['x-request-id'] + '</code>'))
    assert.ok(two.body.includes('Request ID: <code>' + two.headers['x-request-id'] + '</code>'))
    assert.notEqual(one.headers['x-request-id'], two.headers['x-request-id'])
  })
})
