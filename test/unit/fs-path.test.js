'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fc = require('fast-check')
const { toFsPath, PlainFsPaths, KEPT_PATHS, MAX_KEPT_TARGET } = require('../../lib/paths/fs-path')

describe('toFsPath', () => {
  it('should equal path.join for any root and path, dot and empty segments included', () => {
    const root = fc.constantFrom('/srv/www', '/', '/srv/www/', '/a', '/srv/w.w')
    const tail = fc.string({ unit: fc.constantFrom('a', '.', '/', '\\', '%', 'é', ' ') })
    fc.assert(fc.property(root, tail, (r, t) => {
      assert.equal(toFsPath(r, '/' + t), path.join(r, '/' + t))
    }), { numRuns: 20000 })
  })

  it('should keep a trailing slash and join plain paths', () => {
    assert.equal(toFsPath('/srv/www', '/docs/'), '/srv/www/docs/')
    assert.equal(toFsPath('/srv/www', '/a/../../etc'), '/srv/etc')
  })
})

describe('PlainFsPaths', () => {
  it('should give what toFsPath gives for every plain path, asked once or again in any order', () => {
    const segment = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'é', '-', '.', ' '), minLength: 1, maxLength: 3 })
      .filter((s) => s[0] !== '.')
    const plainPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => '/' + parts.join('/'))
    fc.assert(fc.property(fc.constantFrom('/srv/www', '/srv/www/', '/a'), fc.array(plainPath, { minLength: 1, maxLength: 30 }), (root, paths) => {
      const memo = new PlainFsPaths(root)
      for (const p of paths.concat(paths.slice().reverse())) assert.equal(memo.of(p, p.length), toFsPath(root, p, true))
    }), { numRuns: 2000 })
  })

  it('should keep each path once, and none cut from a target longer than the bound', () => {
    const memo = new PlainFsPaths('/srv/www')
    assert.equal(memo.of('/a', 2), '/srv/www/a')
    assert.equal(memo.of('/a', 2), '/srv/www/a')
    assert.equal(memo.size, 1)
    assert.equal(memo.of('/b', MAX_KEPT_TARGET), '/srv/www/b')
    assert.equal(memo.size, 2)
    assert.equal(memo.of('/c', MAX_KEPT_TARGET + 1), '/srv/www/c')
    assert.equal(memo.size, 2)
  })

  it('should start over past its bound, so that made-up paths cannot grow it', () => {
    const memo = new PlainFsPaths('/srv/www')
    for (let i = 0; i < KEPT_PATHS; i++) memo.of('/p' + i, 10)
    assert.equal(memo.size, KEPT_PATHS)
    assert.equal(memo.of('/one-more', 10), '/srv/www/one-more')
    assert.equal(memo.size, 1)
    assert.equal(memo.of('/p0', 10), '/srv/www/p0')
    assert.equal(memo.size, 2)
  })
})
