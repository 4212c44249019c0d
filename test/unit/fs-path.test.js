'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fc = require('fast-check')
const { toFsPath } = require('../../lib/paths/fs-path')

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
