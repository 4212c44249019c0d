'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { SuccessCache } = require('../../lib/auth/success-cache')

describe('SuccessCache', () => {
  it('should forget a success after its ttl', () => {
    let now = 1000
    const cache = new SuccessCache({ ttl: 100, now: () => now })
    const key = cache.key('alice', 'secret')
    assert.equal(cache.has(key), false)
    cache.add(key)
    assert.equal(cache.has(key), true)
    now += 100
    assert.equal(cache.has(key), false)
    assert.equal(cache.size, 0)
  })

  it('should key on both name and password, under a per-process secret', () => {
    const cache = new SuccessCache()
    const other = new SuccessCache()
    assert.notEqual(cache.key('alice', 'secret'), cache.key('alice', 'secreT'))
    assert.notEqual(cache.key('ab', 'c'), cache.key('a', 'bc'))
    assert.notEqual(cache.key('alice', 'secret'), other.key('alice', 'secret'))
  })

  it('should hold at most max entries, dropping the oldest', () => {
    const cache = new SuccessCache({ max: 3 })
    const keys = ['a', 'b', 'c', 'd'].map((name) => cache.key(name, 'x'))
    for (const key of keys) cache.add(key)
    assert.equal(cache.size, 3)
    assert.equal(cache.has(keys[0]), false)
    assert.equal(cache.has(keys[3]), true)
  })
})
