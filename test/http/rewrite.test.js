'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')

// `{path}` shows the URL the later stages see.
const X_PATH = { 'X-Path': '{path}' }

async function startSite (scope, config, files) {
  const site = await makeSite(scope, { workers: 1, customHeaders: X_PATH, ...config }, files)
  return (await startSvr(scope, site.configFile)).port
}

function replaceAll (regex, replacement) {
  return [{ regex, replacement }]
}

describe('rewriteMap', () => {
  const scope = createScope()
  let port

  before(async () => {
    port = await startSite(scope, {
      rewriteMap: [
        {
          definingRegex: '/^\\/app\\//',
          replacements: replaceAll('/^\\/app\\/[^?]*/', '/front.txt'),
          isNotFile: true,
          isNotDirectory: true
        },
        { definingRegex: '/^\\/user\\/([a-z]+)$/', replacements: replaceAll('/^\\/user\\/([a-z]+)$/', '/users/$1.txt') },
        { definingRegex: '/^\\/plain$/', replacements: replaceAll('/^\\/plain/', '/file.txt'), append: '?from=rule' },
        { definingRegex: '/^\\/hosted$/', host: 'a.example', replacements: replaceAll('/.*/', '/host-a.txt') },
        { definingRegex: '/^\\/local$/', ip: '192.0.2.1', replacements: replaceAll('/.*/', '/file.txt') },
        { definingRegex: '/^\\/local-here$/', ip: '127.0.0.1', replacements: replaceAll('/.*/', '/file.txt') },
        { definingRegex: '/^\\/first$/', replacements: replaceAll('/first/', 'chain') },
        { definingRegex: '/^\\/(?:first|chain)$/', replacements: replaceAll('/.*/', '/second.txt') },
        { definingRegex: '/^\\/escape/', replacements: replaceAll('/^\\/escape/', '/dir/../..') },
        { definingRegex: '/^\\/encoded-escape/', replacements: replaceAll('/^\\/encoded-escape/', '/%2e%2e/x') },
        { definingRegex: '/^\\/malformed/', replacements: replaceAll('/^\\/malformed/', '/%ZZ') },
        { definingRegex: '/^\\/global\\//', replacements: replaceAll('/o/g', '0') },
        {
          definingRegex: '/^\\/seq$/',
          replacements: [{ regex: '/^\\/seq/', replacement: '/step' }, { regex: '/step/', replacement: 'seq.txt' }]
        },
        { definingRegex: '/^\\/messy$/', replacements: replaceAll('/.*/', './dir//inner.txt.') },
        { definingRegex: '/^\\/query\\?k=v$/', replacements: replaceAll('/.*/', '/file.txt') },
        { definingRegex: '/^\\/old-dir(?:\\?|$)/', replacements: replaceAll('/^\\/old-dir/', '/dir') },
        { definingRegex: '/^\\/to-dotfile$/', replacements: replaceAll('/.*/', '/.secret.txt') }
      ]
    }, {
      'file.txt': 'plain file\n',
      'front.txt': 'front controller\n',
      'app/real.txt': 'real file\n',
      'app/sub/x.txt': 'x\n',
      'users/alice.txt': 'alice\n',
      'host-a.txt': 'host a\n',
      'second.txt': 'second\n',
      'seq.txt': 'sequence\n',
      'dir/inner.txt': 'inner\n',
      '.secret.txt': 'secret\n'
    })
  })
  after(() => scope.cleanup())

  describe('with isNotFile and isNotDirectory (front controller)', () => {
    it('should serve an existing file unchanged', async () => {
      const res = await request(port, '/app/real.txt')
      assert.equal(res.status, 200)
      assert.equal(res.body, 'real file\n')
      assert.equal(res.headers['x-path'], '/app/real.txt')
    })

    it('should send anything else to the front controller, query kept', async () => {
      const res = await request(port, '/app/virtual/route?x=1')
      assert.equal(res.status, 200)
      assert.equal(res.body, 'front controller\n')
      assert.equal(res.headers['x-path'], '/front.txt?x=1')
    })

    it('should leave an existing directory alone', async () => {
      const res = await request(port, '/app/sub?x=1')
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/app/sub/?x=1')
      const inner = await request(port, '/app/sub/')
      assert.equal(inner.headers['x-path'], '/app/sub/')
    })
  })

  it('should insert capture groups with $1', async () => {
    const res = await request(port, '/user/alice')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'alice\n')
    assert.equal((await request(port, '/user/Alice')).headers['x-path'], '/user/Alice')
  })

  it('should add append after the replacements', async () => {
    const res = await request(port, '/plain')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'plain file\n')
    assert.equal(res.headers['x-path'], '/file.txt?from=rule')
  })

  it('should apply a host-scoped rule only to its host', async () => {
    const own = await request(port, '/hosted', { headers: { host: 'A.Example:8080' } })
    assert.equal(own.status, 200)
    assert.equal(own.body, 'host a\n')
    const other = await request(port, '/hosted', { headers: { host: 'b.example' } })
    assert.equal(other.status, 404)
    assert.equal(other.headers['x-path'], '/hosted')
  })

  it('should apply an ip-scoped rule only on that local address', async () => {
    // svr listens on 127.0.0.1.
    const here = await request(port, '/local-here')
    assert.equal(here.status, 200)
    assert.equal(here.body, 'plain file\n')
    assert.equal(here.headers['x-path'], '/file.txt')
    const res = await request(port, '/local')
    assert.equal(res.status, 404)
    assert.equal(res.headers['x-path'], '/local')
  })

  it('should apply only the first matching rule, without chaining', async () => {
    const first = await request(port, '/first')
    assert.equal(first.status, 404)
    assert.equal(first.headers['x-path'], '/chain')
    const direct = await request(port, '/chain')
    assert.equal(direct.status, 200)
    assert.equal(direct.body, 'second\n')
  })

  it('should run replacements in order and honour the g flag', async () => {
    assert.equal((await request(port, '/seq')).body, 'sequence\n')
    assert.equal((await request(port, '/global/foo')).headers['x-path'], '/gl0bal/f00')
    // The same compiled g regex serves the next request from the start again.
    assert.equal((await request(port, '/global/oo')).headers['x-path'], '/gl0bal/00')
  })

  it('should test definingRegex against path and query', async () => {
    assert.equal((await request(port, '/query?k=v')).body, 'plain file\n')
    assert.equal((await request(port, '/query')).status, 404)
  })

  it('should normalise a rewritten path that only needs cleaning', async () => {
    const res = await request(port, '/messy')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'inner\n')
    assert.equal(res.headers['x-path'], '/dir/inner.txt')
  })

  it('should refuse a rewrite that climbs out with .. with 403', async () => {
    for (const target of ['/escape', '/encoded-escape']) {
      const res = await request(port, target)
      assert.equal(res.status, 403, target)
      assert.match(res.body, /<title>403 Forbidden<\/title>/)
    }
  })

  // The sanitizer found /to-dotfile plain (no segment starting with "."),
  // which no longer holds for the path the rule made of it.
  it('should judge dotfiles on the rewritten path, not on the plain one asked for', async () => {
    const res = await request(port, '/to-dotfile')
    assert.equal(res.status, 403)
    assert.doesNotMatch(res.body, /secret/)
  })

  it('should refuse a malformed rewrite result with 400', async () => {
    const res = await request(port, '/malformed')
    assert.equal(res.status, 400)
  })

  it('should redirect a rewritten directory to the slash form of the original path', async () => {
    const res = await request(port, '/old-dir?q')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, '/old-dir/?q')
  })
})

describe('wwwredirect and web-root postfixes', () => {
  const scope = createScope()
  let port
  let keepDoubleSlashes

  before(async () => {
    const files = {
      'page.txt': 'root page\n',
      'shared/s.txt': 'shared\n',
      'site/page.txt': 'site page\n',
      'site/sub/x.txt': 'x\n',
      'site/cgi-binary': 'not a prefix\n',
      'cgi-bin/site/run.txt': 'cgi\n',
      'multi/page.txt': 'multi page\n'
    }
    const postfixes = [
      { host: 'site.test', postfix: 'site', skipRegex: '/^\\/shared\\//' },
      { host: '*.multi.test', postfix: 'multi' }
    ]
    port = await startSite(scope, {
      wwwredirect: true,
      domain: 'Example.test',
      allowDoubleSlashes: true,
      wwwrootPostfixesVHost: postfixes,
      wwwrootPostfixPrefixesVHost: ['/cgi-bin'],
      rewriteMap: [
        { definingRegex: '/^\\/site\\/rewritten$/', replacements: replaceAll('/rewritten/', 'page.txt') },
        { definingRegex: '/^\\/collapsed\\/x$/', replacements: replaceAll('/.*/', '/page.txt') },
        { definingRegex: '/^\\/\\/kept$/', allowDoubleSlashes: true, replacements: replaceAll('/.*/', '/page.txt') }
      ]
    }, files)
    keepDoubleSlashes = await startSite(scope, {
      allowDoubleSlashes: true,
      allowPostfixDoubleSlashes: true,
      wwwrootPostfixesVHost: postfixes
    }, files)
  })
  after(() => scope.cleanup())

  describe('wwwredirect', () => {
    it('should redirect the bare domain to www with port and clean URL', async () => {
      const res = await request(port, '/a/../page.txt?q=1', { headers: { host: 'example.test:8080' } })
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, 'http://www.example.test:8080/page.txt?q=1')
    })

    it('should match the Host without case or trailing dot, and redirect to the configured name', async () => {
      const res = await request(port, '/page.txt', { headers: { host: 'EXAMPLE.test.' } })
      assert.equal(res.headers.location, 'http://www.example.test/page.txt')
    })

    it('should never copy a port that is not a number', async () => {
      const res = await request(port, '/page.txt', { headers: { host: 'example.test:@evil.example' } })
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, 'http://www.example.test/page.txt')
    })

    it('should leave other hosts and www alone', async () => {
      for (const host of ['www.example.test', 'other.test', 'sub.example.test']) {
        const res = await request(port, '/page.txt', { headers: { host } })
        assert.equal(res.status, 200, host)
        assert.equal(res.body, 'root page\n', host)
      }
    })

    it('should serve a request without Host instead of failing (SVR.JS 3.x answered 500)', async () => {
      const res = await rawRequest(port, 'GET /page.txt HTTP/1.0\r\n\r\n')
      assert.equal(res.status, 200)
      assert.equal(res.body, 'root page\n')
    })
  })

  describe('wwwrootPostfixesVHost', () => {
    it('should serve a matching host from its sub-directory', async () => {
      const res = await request(port, '/page.txt?x', { headers: { host: 'site.test' } })
      assert.equal(res.status, 200)
      assert.equal(res.body, 'site page\n')
      assert.equal(res.headers['x-path'], '/site/page.txt?x')
      const wildcard = await request(port, '/page.txt', { headers: { host: 'a.multi.test' } })
      assert.equal(wildcard.body, 'multi page\n')
    })

    it('should leave other hosts on the webroot', async () => {
      assert.equal((await request(port, '/page.txt', { headers: { host: 'else.test' } })).body, 'root page\n')
    })

    it('should not add the postfix to URLs matching skipRegex', async () => {
      const res = await request(port, '/shared/s.txt', { headers: { host: 'site.test' } })
      assert.equal(res.status, 200)
      assert.equal(res.body, 'shared\n')
    })

    it('should insert the postfix after a whole-segment prefix', async () => {
      const res = await request(port, '/cgi-bin/run.txt', { headers: { host: 'site.test' } })
      assert.equal(res.body, 'cgi\n')
      assert.equal(res.headers['x-path'], '/cgi-bin/site/run.txt')
      const notPrefix = await request(port, '/cgi-binary', { headers: { host: 'site.test' } })
      assert.equal(notPrefix.body, 'not a prefix\n')
    })

    it('should redirect a directory to the slash form of the path the client used', async () => {
      const res = await request(port, '/sub', { headers: { host: 'site.test' } })
      assert.equal(res.status, 301)
      assert.equal(res.headers.location, '/sub/')
    })

    it('should let rewriteMap see the postfixed URL', async () => {
      const res = await request(port, '/rewritten', { headers: { host: 'site.test' } })
      assert.equal(res.body, 'site page\n')
    })

    it('should collapse double slashes unless allowPostfixDoubleSlashes', async () => {
      const collapsed = await request(port, '//page.txt', { headers: { host: 'site.test' } })
      assert.equal(collapsed.headers['x-path'], '/site/page.txt')
      const kept = await request(keepDoubleSlashes, '//page.txt', { headers: { host: 'site.test' } })
      assert.equal(kept.headers['x-path'], '/site//page.txt')
      assert.equal(kept.body, 'site page\n')
    })
  })

  describe('rewriteMap with allowDoubleSlashes on', () => {
    it('should match rules against the collapsed URL unless the rule keeps double slashes', async () => {
      const collapsed = await request(port, '//collapsed//x')
      assert.equal(collapsed.body, 'root page\n')
      assert.equal(collapsed.headers['x-path'], '/page.txt')
      const kept = await request(port, '//kept')
      assert.equal(kept.body, 'root page\n')
      assert.equal((await request(port, '/kept')).status, 404)
    })
  })
})

describe('rewriteMap of 10,000 rules', () => {
  const scope = createScope()
  let port

  // Rule i sends /sec-i/… to /target-i; a few rules placed between them
  // must win or lose by their place in the list alone.
  before(async () => {
    const rules = []
    for (let i = 0; i < 10000; i++) {
      rules.push({ definingRegex: `/^\\/sec-${i}\\//`, replacements: replaceAll('/.*/', `/target-${i}.txt`) })
    }
    const place = (at, definingRegex, target) => rules.splice(at, 0, { definingRegex, replacements: replaceAll('/.*/', target) })
    place(9000, '/\\/sec-9\\//', '/unanchored.txt')
    place(8000, '/^\\/shout$/', '/shout-exact.txt')
    place(7000, '/^\\/sec-42\\/late/', '/late.txt')
    place(5000, '/\\/wins-unprefixed$/', '/unprefixed.txt')
    place(2000, '/^\\/SHOUT/i', '/shout-folded.txt')
    port = await startSite(scope, { rewriteMap: rules }, {})
  })
  after(() => scope.cleanup())

  it('should rewrite with the first matching rule in config order', async () => {
    const expected = {
      '/sec-0/a': '/target-0.txt',
      '/sec-42/late': '/target-42.txt',
      '/sec-9/x': '/target-9.txt',
      '/x/sec-9/': '/unanchored.txt',
      '/shout': '/shout-folded.txt',
      '/a/wins-unprefixed': '/unprefixed.txt',
      '/sec-9999/z?q=1': '/target-9999.txt',
      '/sec-10000/': '/sec-10000/',
      '/1k.html': '/1k.html'
    }
    const actual = {}
    for (const target of Object.keys(expected)) actual[target] = (await request(port, target)).headers['x-path']
    assert.deepEqual(actual, expected)
  })
})
