'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { FairShare } = require('../../lib/balance/primary')
const { ShedPolicy, SHED_INTERVAL_MS } = require('../../lib/balance/worker')

function recorder () {
  const sent = []
  return { sent, fair: new FairShare((worker, share) => sent.push([worker.id, share])) }
}

describe('FairShare', () => {
  it('should tell no share to a lone worker, then the rounded-up average to all', () => {
    const { sent, fair } = recorder()
    const a = { id: 'a' }
    const b = { id: 'b' }
    fair.report(a, 5)
    assert.deepEqual(sent, [['a', null]])
    fair.report(b, 0)
    assert.deepEqual(sent.slice(1), [['a', 3], ['b', 3]])
  })

  it('should send only changes, and recompute when a worker leaves', () => {
    const { sent, fair } = recorder()
    const [a, b, c] = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
    fair.report(a, 4)
    fair.report(b, 4)
    fair.report(c, 4)
    sent.length = 0
    fair.report(a, 5)
    // ceil(13 / 3) = 5: a change for everyone.
    assert.deepEqual(sent, [['a', 5], ['b', 5], ['c', 5]])
    sent.length = 0
    fair.report(b, 3)
    assert.deepEqual(sent, [['a', 4], ['b', 4], ['c', 4]])
    sent.length = 0
    fair.report(b, 3)
    assert.deepEqual(sent, [], 'no news, no message')
    fair.forget(c)
    assert.deepEqual(sent, [], 'ceil(8 / 2) is still 4')
    fair.report(a, 7)
    assert.deepEqual(sent, [['a', 5], ['b', 5]], 'the one that left is not told')
    fair.forget(b)
    assert.deepEqual(sent.slice(2), [['a', null]])
  })

  it('should ignore reports that are not a count', () => {
    const { sent, fair } = recorder()
    for (const bad of [-1, NaN, Infinity, '3', null]) fair.report({ id: 'x' }, bad)
    assert.deepEqual(sent, [])
  })
})

describe('ShedPolicy', () => {
  it('should close HTTP/1 connections above the share, one per interval', () => {
    const policy = new ShedPolicy()
    policy.count(5)
    assert.equal(policy.shouldShed(1, 0), false, 'no share known: nothing to shed')
    policy.share(3)
    assert.equal(policy.shouldShed(2, 1000), false, 'HTTP/2 sessions are left alone')
    assert.equal(policy.shouldShed(1, 1000), true)
    assert.equal(policy.shouldShed(1, 1000 + SHED_INTERVAL_MS / 2), false, 'within the interval')
    assert.equal(policy.shouldShed(1, 1000 + SHED_INTERVAL_MS), true)
    assert.equal(policy.shouldShed(1, 1000 + 3 * SHED_INTERVAL_MS), false, 'the excess of two is gone')
    policy.count(4)
    assert.equal(policy.shouldShed(1, 1000 + 4 * SHED_INTERVAL_MS), true, 'a new count shows one more')
    policy.share(null)
    policy.count(50)
    assert.equal(policy.shouldShed(1, 1000 + 6 * SHED_INTERVAL_MS), false, 'alone again')
  })
})
