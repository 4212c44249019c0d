'use strict'

// The benchmark's warm-up: a target counts as warm once three successive
// one-second rates spread by at most 5% of their median, and never before
// three runs.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { warmUp, isSteady, warmupFact } = require('../../bench/load')

function runsOf (rates) {
  let i = 0
  const calls = []
  const once = async (seconds) => {
    calls.push(seconds)
    return { rps: rates[i++] }
  }
  return { once, calls }
}

test('a rate still climbing is not steady; three spread by at most 5% of their median are', () => {
  // Two runs that agree are too few to tell.
  assert.equal(isSteady([75000, 75000]), false)
  assert.equal(isSteady([52000, 65000]), false)
  assert.equal(isSteady([52000, 65000, 75000]), false)
  assert.equal(isSteady([52000, 65000, 75000, 75800, 76600]), true)
  // A dip between two rises (a worker's GC, a noisy neighbour) is not steady.
  assert.equal(isSteady([47000, 52000, 36000, 38000, 58000]), false)
  // A climb of a few percent a second is still a climb.
  assert.equal(isSteady([70000, 73000, 75000]), false)
  // A spread of exactly 5% of the median still counts; more does not.
  assert.equal(isSteady([98, 100, 103]), true)
  assert.equal(isSteady([97, 100, 103]), false)
  assert.equal(isSteady([98, 100, 104]), false)
  assert.equal(isSteady([0, 0, 0]), false)
})

test('warmUp loads in one-second runs until the rate is steady', async () => {
  const { once, calls } = runsOf([47000, 52000, 36000, 38000, 58000, 56000, 58000, 59000])
  const warm = await warmUp(once, 20)
  assert.deepEqual(warm, { seconds: 7, steady: true, rates: [47000, 52000, 36000, 38000, 58000, 56000, 58000] })
  assert.deepEqual(calls, [1, 1, 1, 1, 1, 1, 1])
})

test('warmUp stops at its limit when the rate never settles, and says so', async () => {
  const { once, calls } = runsOf([10, 20, 30, 40, 50, 60, 70])
  const warm = await warmUp(once, 5)
  assert.deepEqual(warm, { seconds: 5, steady: false, rates: [10, 20, 30, 40, 50] })
  assert.equal(calls.length, 5)
})

test('no warm-up when the plan has none (a smoke run)', async () => {
  const { once, calls } = runsOf([1, 2, 3])
  assert.deepEqual(await warmUp(once, 0), { seconds: 0, steady: false, rates: [] })
  assert.equal(calls.length, 0)
  assert.equal(warmupFact({ warmup: 0 }), 'no warm-up · ')
  assert.equal(warmupFact({ warmup: 20 }), 'each target first loaded in 1 s runs until 3 in a row spread by at most 5% (at most 20 s) · ')
})
