'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { segmentPrefix } = require('../../lib/paths/segment-prefix')

const segment = fc.stringMatching(/^[a-z]{0,4}$/)
const pathOf = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => '/' + parts.join('/'))

describe('path prefixes on a segment boundary', () => {
  it('should match the prefix itself and what is below it, never a longer segment', () => {
    const api = segmentPrefix('/api')
    assert.deepEqual(['/api', '/api/', '/api/users', '/apis', '/ap', '/', '/x/api'].map(api), [true, true, true, false, false, false, false])
    const slash = segmentPrefix('/api/')
    assert.deepEqual(['/api', '/api/', '/api/users'].map(slash), [false, true, true])
    assert.equal(segmentPrefix('/')('/anything'), true)
  })

  it('should agree with "equal, or starts with the prefix and a slash" for any paths', () => {
    fc.assert(fc.property(pathOf, pathOf, (prefix, path) => {
      const bare = prefix.endsWith('/') ? null : prefix
      const expected = bare === null ? path.startsWith(prefix) : path === bare || path.startsWith(bare + '/')
      return segmentPrefix(prefix)(path) === expected
    }))
  })
})
