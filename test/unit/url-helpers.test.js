'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { relativeLocation } = require('../../lib/paths/relative-location')
const { compileRewriteMap, applyRule, collapseSlashes, ruleMatches, statAllows } = require('../../lib/rewrite/rewrite-map')
const { compilePostfixes } = require('../../lib/rewrite/postfix')
const { compileWwwRedirect } = require('../../lib/rewrite/www-redirect')
const { setFixedHeaders, setPathHeaders } = require('../../lib/pipeline/request/custom-headers')
const { sitesFor, siteFor } = require('../helpers/site')

const CTX = { hostname: 'site.test', localAddress: '127.0.0.1' }

function postfixConfig (entries, prefixes = []) {
  return { wwwrootPostfixesVHost: entries, wwwrootPostfixPrefixesVHost: prefixes }
}

// A request context with the site (lib/pipeline/site.js) its host and address get.
function siteCtx (config, { hostname, localAddress } = CTX) {
  return { hostname, localAddress, site: siteFor(config, hostname, localAddress) }
}

describe('relativeLocation(path, search)', () => {
  it('should collapse a leading run of slashes only', () => {
    assert.equal(relativeLocation('//evil.example/a//b', '?x'), '/evil.example/a//b?x')
    assert.equal(relativeLocation('////x', ''), '/x')
    assert.equal(relativeLocation('/a//b', ''), '/a//b')
    assert.equal(relativeLocation('/', '?q'), '/?q')
  })
})

describe('collapseSlashes(url)', () => {
  it('should collapse runs in the path and leave the query alone', () => {
    assert.equal(collapseSlashes('//a///b/?x=//y'), '/a/b/?x=//y')
    assert.equal(collapseSlashes('/a/b'), '/a/b')
    assert.equal(collapseSlashes('/?//'), '/?//')
  })
})

describe('rewriteMap rules', () => {
  it('should restart sticky and global regexes on every request', () => {
    const [rule] = compileRewriteMap([{
      definingRegex: '/a/gy',
      replacements: [{ regex: '/\\/a/y', replacement: '/b' }, { regex: '/x/g', replacement: 'y' }]
    }])
    for (let i = 0; i < 3; i++) {
      assert.equal(ruleMatches(rule, 'a/x', CTX), true)
      assert.equal(applyRule(rule, '/axx'), '/byy')
    }
  })

  it('should skip a rule by host and by file conditions', () => {
    const rewriteMap = [
      { definingRegex: '/^/', host: '*.example' },
      { definingRegex: '/^/', isNotFile: true }
    ]
    const [hosted, files] = compileRewriteMap(rewriteMap)
    assert.equal(ruleMatches(hosted, '/', siteCtx({ rewriteMap })), false)
    assert.equal(ruleMatches(hosted, '/', siteCtx({ rewriteMap }, { hostname: 'a.example', localAddress: '' })), true)
    assert.equal(statAllows(files, { isFile: () => true, isDirectory: () => false }), false)
    assert.equal(statAllows(files, { isFile: () => false, isDirectory: () => true }), true)
    assert.equal(statAllows(files, null), true)
  })
})

describe('compilePostfixes(config)', () => {
  it('should return null without entries', () => {
    assert.equal(compilePostfixes(postfixConfig([])), null)
  })

  it('should insert after a whole-segment prefix and after a slash-terminated one', () => {
    const config = postfixConfig([{ postfix: 'p' }], ['/cgi-bin', '/files/'])
    const add = compilePostfixes(config)
    const ctx = siteCtx(config)
    assert.equal(add('/cgi-bin/x?q', ctx), '/cgi-bin/p/x?q')
    assert.equal(add('/cgi-bin?q', ctx), '/cgi-bin/p?q')
    assert.equal(add('/cgi-binary', ctx), '/p/cgi-binary')
    assert.equal(add('/files/a', ctx), '/files/p/a')
    assert.equal(add('/', ctx), '/p/')
  })

  it('should take the first entry that matches, and none when skipRegex matches', () => {
    const config = postfixConfig([
      { host: 'other.test', postfix: 'other' },
      { host: 'site.test', postfix: 'site', skipRegex: '/^\\/skip/g' },
      { postfix: 'fallback' }
    ])
    const add = compilePostfixes(config)
    const ctx = siteCtx(config)
    assert.equal(add('/a', ctx), '/site/a')
    assert.equal(add('/skip', ctx), null)
    assert.equal(add('/skip', ctx), null, 'a g flag does not carry state over')
    assert.equal(add('/a', siteCtx(config, { hostname: 'x.test', localAddress: '' })), '/fallback/a')
  })
})

describe('compileWwwRedirect(config)', () => {
  const req = (host) => ({ headers: { host }, url: '/p?q', socket: {} })

  it('should be off without a usable domain', () => {
    assert.equal(compileWwwRedirect({ wwwredirect: false, domain: 'example.test' }), null)
    assert.equal(compileWwwRedirect({ wwwredirect: true, domain: '' }), null)
    assert.equal(compileWwwRedirect({ wwwredirect: true, domain: 'www.example.test' }), null)
  })

  it('should build the target from the configured domain', () => {
    const locate = compileWwwRedirect({ wwwredirect: true, domain: 'Example.Test.' })
    assert.equal(locate(req('example.test:81'), { hostname: 'example.test' }), 'http://www.example.test:81/p?q')
    assert.equal(locate(req('example.test:1/x'), { hostname: 'example.test' }), 'http://www.example.test/p?q')
    assert.equal(locate(req(undefined), { hostname: '' }), null)
  })
})

describe('custom headers', () => {
  function fakeResponse () {
    const headers = {}
    return { headers, setHeader (name, value) { headers[name.toLowerCase()] = value } }
  }
  const config = {
    customHeaders: { 'X-A': 'a {path}', 'X-B': 'b', Server: 'hidden' },
    customHeadersVHost: [{ host: 'site.test', headers: { 'x-b': 'site' } }]
  }

  function setHeaders (res, set, url) {
    setFixedHeaders(res, set)
    setPathHeaders(res, set, url)
  }

  it('should merge a vhost entry case-insensitively and keep Server on top', () => {
    const sites = sitesFor(config, 'svr')
    const res = fakeResponse()
    setHeaders(res, sites.resolve(CTX.hostname, CTX.localAddress).headers, '/u?q')
    assert.deepEqual(res.headers, { 'x-a': 'a /u?q', 'x-b': 'site', server: 'svr' })
    const plain = fakeResponse()
    setHeaders(plain, sites.resolve('else.test', '').headers, '/')
    assert.equal(plain.headers['x-b'], 'b')
  })

  it('should set only the {path} headers with the path', () => {
    const sites = sitesFor(config, 'svr')
    assert.equal(sites.pathHeaders, true)
    const res = fakeResponse()
    setPathHeaders(res, sites.resolve('else.test', '').headers, '/new')
    assert.deepEqual(res.headers, { 'x-a': 'a /new' })
  })

  it('should compile a configuration once per worker and server string', () => {
    const sites = sitesFor(config, 'svr')
    assert.equal(sites.resolve('site.test', '').headers, sites.resolve('site.test', '::1').headers)
    const other = fakeResponse()
    setFixedHeaders(other, sitesFor(config, 'svr/1').resolve('site.test', '').headers)
    assert.equal(other.headers.server, 'svr/1')
  })
})
