'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { relativeLocation } = require('../../lib/util/relative-location')
const { compileRewriteMap, applyRule, collapseSlashes, ruleMatches, statAllows } = require('../../lib/rewrite/rewrite-map')
const { compilePostfixes } = require('../../lib/rewrite/postfix')
const { compileWwwRedirect } = require('../../lib/rewrite/www-redirect')
const { compileCustomHeaders, selectHeaderSet, setHeaders, setPathHeaders } = require('../../lib/custom-headers')

const CTX = { hostname: 'site.test', localAddress: '127.0.0.1' }

function postfixConfig (entries, prefixes = []) {
  return { wwwrootPostfixesVHost: entries, wwwrootPostfixPrefixesVHost: prefixes }
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
    const [hosted, files] = compileRewriteMap([
      { definingRegex: '/^/', host: '*.example' },
      { definingRegex: '/^/', isNotFile: true }
    ])
    assert.equal(ruleMatches(hosted, '/', CTX), false)
    assert.equal(ruleMatches(hosted, '/', { hostname: 'a.example', localAddress: '' }), true)
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
    const add = compilePostfixes(postfixConfig([{ postfix: 'p' }], ['/cgi-bin', '/files/']))
    assert.equal(add('/cgi-bin/x?q', CTX), '/cgi-bin/p/x?q')
    assert.equal(add('/cgi-bin?q', CTX), '/cgi-bin/p?q')
    assert.equal(add('/cgi-binary', CTX), '/p/cgi-binary')
    assert.equal(add('/files/a', CTX), '/files/p/a')
    assert.equal(add('/', CTX), '/p/')
  })

  it('should take the first entry that matches, and none when skipRegex matches', () => {
    const add = compilePostfixes(postfixConfig([
      { host: 'other.test', postfix: 'other' },
      { host: 'site.test', postfix: 'site', skipRegex: '/^\\/skip/g' },
      { postfix: 'fallback' }
    ]))
    assert.equal(add('/a', CTX), '/site/a')
    assert.equal(add('/skip', CTX), null)
    assert.equal(add('/skip', CTX), null, 'a g flag does not carry state over')
    assert.equal(add('/a', { hostname: 'x.test', localAddress: '' }), '/fallback/a')
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

  it('should merge a vhost entry case-insensitively and keep Server on top', () => {
    const compiled = compileCustomHeaders(config, 'svr')
    const res = fakeResponse()
    setHeaders(res, selectHeaderSet(compiled, CTX), '/u?q')
    assert.deepEqual(res.headers, { 'x-a': 'a /u?q', 'x-b': 'site', server: 'svr' })
    const plain = fakeResponse()
    setHeaders(plain, selectHeaderSet(compiled, { hostname: 'else.test', localAddress: '' }), '/')
    assert.equal(plain.headers['x-b'], 'b')
  })

  it('should set only the {path} headers again after a URL change', () => {
    const compiled = compileCustomHeaders(config, 'svr')
    assert.equal(compiled.hasPathHeaders, true)
    const res = fakeResponse()
    setPathHeaders(res, compiled.base, '/new')
    assert.deepEqual(res.headers, { 'x-a': 'a /new' })
  })

  it('should compile a configuration once per server string', () => {
    assert.equal(compileCustomHeaders(config, 'svr'), compileCustomHeaders(config, 'svr'))
    assert.notEqual(compileCustomHeaders(config, 'svr'), compileCustomHeaders(config, 'svr/1'))
  })
})
