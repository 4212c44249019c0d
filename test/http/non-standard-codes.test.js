'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

const CODES = [
  { scode: 301, url: '/old', location: '/new' },
  { scode: 308, url: '/moved', location: '/elsewhere?from=moved' },
  { scode: 403, url: '/blocked' },
  { scode: 410, url: '/gone' },
  { scode: 302, regex: '/^\\/r\\/([a-z]+)/', location: '/target/$1' },
  { scode: 307, regex: '/^\\/keep$/', location: '/kept' },
  { scode: 302, regex: '/^\\/go(\\/.*)$/', location: '/$1' },
  { scode: 302, regex: '/^\\/ext\\/(.*)$/', location: 'https://example.com/$1' },
  { scode: 302, regex: '/.*\\/x\\/(\\d+)/', location: '/y/$1' },
  { scode: 301, url: '/café', location: '/menu café' },
  { scode: 418, url: '/tea', host: 'teapot.test' },
  { scode: 403, url: '/local-only', users: ['127.0.0.1'] },
  { scode: 403, url: '/lan-only', users: ['192.0.2.0/24', '2001:db8::/32'] },
  { scode: 451, url: '/legal', users: ['127.0.0.0/8'] },
  { scode: 403, url: '/nobody', users: [] },
  { scode: 401, url: '/both' },
  { scode: 410, url: '/both' },
  { scode: 499, url: '/odd' },
  { scode: 403, url: '/elsewhere-only', ip: '192.0.2.1' },
  { scode: 403, url: '/here-only', ip: '127.0.0.1' }
]

describe('nonStandardCodes', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, { workers: 1, allowDoubleSlashes: true, rewriteDirtyURLs: true, nonStandardCodes: CODES }, {
      'index.html': 'index',
      'blocked/inner.html': 'inner',
      'local-only': 'local file',
      'lan-only': 'lan file',
      nobody: 'nobody file',
      tea: 'just a file',
      'elsewhere-only': 'served',
      'here-only': 'served'
    })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should redirect a url entry and carry the query string over (Appendix A)', async () => {
    const res = await request(port, '/old?x=1')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/new?x=1')
    const plain = await request(port, '/old')
    assert.equal(plain.headers.location, '/new')
  })

  it('should append the query to a location that has one already', async () => {
    const res = await request(port, '/moved?x=1')
    assert.equal(res.status, 308)
    assert.equal(res.headers.location, '/elsewhere?from=moved&x=1')
  })

  it('should replace the whole match of a regex with a leading .*, its groups as the regex takes them', async () => {
    // The greedy .* takes the last /x/<digits>: $1 is 2, and the match
    // starts at the path's beginning, so nothing of it is left over.
    const res = await request(port, '/x/1/x/2')
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, '/y/2')
    assert.equal((await request(port, '/a/x/3')).headers.location, '/y/3')
  })

  it('should match url exactly, not as a prefix', async () => {
    assert.equal((await request(port, '/blocked')).status, 403)
    assert.equal((await request(port, '/blocked/inner.html')).status, 200)
    assert.equal((await request(port, '/blockedx')).status, 404)
  })

  it('should match the slash-collapsed path (allowDoubleSlashes keeps "//")', async () => {
    const res = await request(port, '//old')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/new')
  })

  it('should answer other codes with that error page', async () => {
    const res = await request(port, '/gone')
    assert.equal(res.status, 410)
    assert.match(res.headers['content-type'], /^text\/html/)
    assert.match(res.body, /410 Gone/)
  })

  it('should answer a code without a description with 501', async () => {
    assert.equal((await request(port, '/odd')).status, 501)
  })

  it('should replace the regex match in path and query, $1 included', async () => {
    const res = await request(port, '/r/abc/rest?q=1')
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, '/target/abc/rest?q=1')
  })

  it('should fall back to replacing on the path when only the path matches', async () => {
    const res = await request(port, '/keep?x=1')
    assert.equal(res.status, 307)
    assert.equal(res.headers.location, '/kept')
  })

  it('should never turn a regex redirect into a protocol-relative one', async () => {
    for (const target of ['/go/evil.example/x', '/go//evil.example/x', '/go/%5Cevil.example/x']) {
      const res = await request(port, target)
      assert.equal(res.status, 302, target)
      assert.match(res.headers.location, /^\/[^/\\]/, target)
    }
    const ext = await request(port, '/ext/a?b=1')
    assert.equal(ext.headers.location, 'https://example.com/a?b=1')
  })

  it('should match a url given decoded and send a percent-encoded Location', async () => {
    const res = await request(port, '/caf%C3%A9')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/menu%20caf%C3%A9')
  })

  it('should apply a host-scoped entry only to that host, ignoring case and port', async () => {
    for (const host of ['teapot.test', 'TEAPOT.test:8080']) {
      assert.equal((await request(port, '/tea', { headers: { host } })).status, 418, host)
    }
    const other = await request(port, '/tea', { headers: { host: 'other.test' } })
    assert.equal(other.status, 200)
    assert.equal(other.body, 'just a file')
  })

  it('should apply an ip-scoped entry only on that local address', async () => {
    // svr listens on 127.0.0.1.
    const here = await request(port, '/here-only')
    assert.equal(here.status, 403)
    assert.match(here.body, /<title>403 Forbidden<\/title>/)
    const elsewhere = await request(port, '/elsewhere-only')
    assert.equal(elsewhere.status, 200)
    assert.equal(elsewhere.body, 'served')
  })

  it('should apply a 403 or 451 entry with users only to those clients', async () => {
    assert.equal((await request(port, '/local-only')).status, 403)
    assert.equal((await request(port, '/legal')).status, 451)
    const lan = await request(port, '/lan-only')
    assert.equal(lan.status, 200)
    assert.equal(lan.body, 'lan file')
    const nobody = await request(port, '/nobody')
    assert.equal(nobody.status, 200)
    assert.equal(nobody.body, 'nobody file')
  })

  it('should act on the first matching entry that is not 401', async () => {
    assert.equal((await request(port, '/both')).status, 410)
  })
})
