'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { createEncodingNegotiator } = require('../../lib/static/negotiate')
const { compileCacheControl } = require('../../lib/static/cache-control')
const { statusForFsError } = require('../../lib/static/fs-errors')

function reqWith (acceptEncoding) {
  return { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }
}

describe('createEncodingNegotiator()', () => {
  const acceptable = createEncodingNegotiator()
  const cases = [
    [undefined, []],
    ['', []],
    ['gzip, deflate, br', ['br', 'gzip']],
    ['gzip', ['gzip']],
    ['gzip;q=0', []],
    ['gzip;q=0, br', ['br']],
    ['gzip;q=1, br;q=0.5', ['gzip', 'br']],
    ['br;q=0, *', ['gzip']],
    ['*', ['br', 'gzip']],
    ['*;q=0', []],
    ['identity;q=0', []],
    ['identity;q=0, gzip', ['gzip']],
    ['identity, gzip;q=0.5', []],
    ['deflate', []],
    ['zstd, gzip;q=0.1', ['gzip']],
    ['GZIP', ['gzip']]
  ]

  for (const [header, expected] of cases) {
    it('should choose ' + JSON.stringify(expected) + ' for ' + JSON.stringify(header), () => {
      assert.deepEqual([...acceptable(reqWith(header))], expected)
    })
  }

  it('should answer alike from its cache, after evictions too', () => {
    const small = createEncodingNegotiator({ maxEntries: 2 })
    for (let i = 0; i < 10; i++) small(reqWith('gzip;q=0.' + i))
    assert.deepEqual([...small(reqWith('gzip;q=0.5'))], ['gzip'])
    assert.deepEqual([...small(reqWith('gzip;q=0'))], [])
    assert.deepEqual([...small(reqWith('gzip;q=0'))], [])
  })
})

describe('compileCacheControl(rules)', () => {
  it('should be null without rules', () => {
    assert.equal(compileCacheControl([]), null)
  })

  it('should return the value of the first matching rule, or null', () => {
    const lookup = compileCacheControl([
      { regex: '/^\\/assets\\//', value: 'immutable' },
      { regex: '/\\.html$/i', value: 'no-cache' },
      { regex: '/^\\/assets\\/x/', value: 'never chosen' }
    ])
    assert.equal(lookup('/assets/x.css'), 'immutable')
    assert.equal(lookup('/docs/INDEX.HTML'), 'no-cache')
    assert.equal(lookup('/big.txt'), null)
  })

  it('should not be thrown off by a g or y flag', () => {
    const lookup = compileCacheControl([{ regex: '/\\.css$/g', value: 'a' }, { regex: '/^\\/s/y', value: 'b' }])
    for (let i = 0; i < 3; i++) {
      assert.equal(lookup('/x.css'), 'a')
      assert.equal(lookup('/s.js'), 'b')
    }
  })
})

describe('statusForFsError(err)', () => {
  it('should map file system errors as SVR.JS does', () => {
    const expected = { ENOENT: 404, ENOTDIR: 404, EACCES: 403, EPERM: 403, ENAMETOOLONG: 414, EMFILE: 503, ELOOP: 508, EIO: 500 }
    for (const [code, status] of Object.entries(expected)) {
      assert.equal(statusForFsError(Object.assign(new Error(code), { code })), status, code)
    }
    assert.equal(statusForFsError(null), 404)
  })
})
