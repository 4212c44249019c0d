'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { CacheBudget } = require('../../lib/cache/budget')

describe('the response cache\'s byte budget', () => {
  it('should stay within maxSize under 10,000 distinct keys, evicting the least recently used', () => {
    const evicted = []
    const budget = new CacheBudget({ maxSize: 1_000_000, evict: (key, overBudget) => evicted.push(overBudget ? key : 'purged ' + key) })
    for (let i = 0; i < 10000; i++) {
      budget.stored('k' + i, 1000 + (i % 7) * 100)
      assert.ok(budget.size <= 1_000_000, budget.size + ' after ' + i)
    }
    assert.equal(budget.count + evicted.length, 10000)
    assert.equal(evicted.filter((key) => key.startsWith('purged ')).length, 0)
    // The oldest went first; the newest are kept.
    assert.deepEqual(evicted.slice(0, 3), ['k0', 'k1', 'k2'])
    assert.equal(budget.entries.has('k9999'), true)
  })

  it('should keep what is hit and evict what is not', () => {
    const evicted = []
    const budget = new CacheBudget({ maxSize: 3000, evict: (key) => evicted.push(key) })
    budget.stored('a', 1000)
    budget.stored('b', 1000)
    budget.stored('c', 1000)
    budget.hits(['a'])
    budget.stored('d', 1000)
    assert.deepEqual(evicted, ['b'])
    // Stored again: replaced in place, not evicted.
    budget.stored('a', 1500)
    assert.deepEqual(evicted, ['b', 'c'])
    assert.equal(budget.size, 2500)
  })

  it('should refuse an entry over the whole budget, and remove a purged one', () => {
    const evicted = []
    const budget = new CacheBudget({ maxSize: 3000, evict: (key, overBudget) => evicted.push([key, overBudget]) })
    budget.stored('a', 1000)
    assert.equal(budget.stored('huge', 5000), false)
    assert.equal(budget.entries.has('huge'), false)
    budget.remove('a')
    assert.deepEqual(evicted, [['a', false]])
    assert.equal(budget.size, 0)
  })
})
