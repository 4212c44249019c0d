'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { judge, addAdmitted } = require('../../lib/traffic/bucket')

// nginx's limit_req as ngx_http_limit_req_module.c keeps it: the excess
// in thousandths of a request and the time of the last admitted request.
// The excess is kept here times the interval, in integers: nginx's own
// arithmetic is integral, and in floating point a request exactly at the
// burst's edge came out a hair over it (1000.0000000001 > 1000) and was
// refused where nginx admits it.
function nginxModel (rule) {
  let state = null
  return (now) => {
    if (state === null) {
      state = { excess: 0, last: now }
      return true
    }
    const ms = now - state.last
    // (excess - 1000 / interval * ms + 1000) * interval
    let excess = state.excess - 1000 * ms + 1000 * rule.interval
    if (excess < 0) excess = 0
    if (excess > rule.burst * 1000 * rule.interval) return false
    state = { excess, last: now }
    return true
  }
}

const rules = fc.record({
  interval: fc.integer({ min: 1, max: 2000 }),
  burst: fc.integer({ min: 0, max: 20 }),
  delay: fc.constant(Infinity)
})
const gaps = fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 200 })

describe('the rate-limit bucket', () => {
  it('should admit what nginx limit_req admits, request for request', () => {
    fc.assert(fc.property(rules, gaps, (rule, steps) => {
      const nginx = nginxModel(rule)
      let tat = 0
      let now = 1000000
      for (const gap of steps) {
        now += gap
        const verdict = judge(tat, rule, now)
        if (verdict.admitted !== nginx(now)) return false
        if (verdict.admitted) tat = verdict.tat
      }
      return true
    }))
  })

  it('should never admit more than burst + 1 + the rate over any stretch of time', () => {
    fc.assert(fc.property(rules, gaps, (rule, steps) => {
      let tat = 0
      let now = 0
      const admitted = []
      for (const gap of steps) {
        now += gap
        const verdict = judge(tat, rule, now)
        if (verdict.admitted) {
          tat = verdict.tat
          admitted.push(now)
        }
      }
      for (let i = 0; i < admitted.length; i++) {
        for (let j = i; j < admitted.length; j++) {
          if (j - i + 1 > rule.burst + 1 + Math.floor((admitted[j] - admitted[i]) / rule.interval)) return false
        }
      }
      return true
    }))
  })

  it('should say how long a refused request must wait, and delay the burst beyond `delay`', () => {
    const rule = { interval: 100, burst: 2, delay: 0 }
    let tat = 0
    const seen = []
    for (let i = 0; i < 4; i++) {
      const verdict = judge(tat, rule, 5000)
      if (verdict.admitted) tat = verdict.tat
      seen.push([verdict.admitted, verdict.wait, verdict.remaining])
    }
    // One at the rate, two of the burst (delayed by one and two intervals), then refused for one interval.
    assert.deepEqual(seen, [[true, 0, 2], [true, 100, 1], [true, 200, 0], [false, 100, 0]])
    // delay: 1 lets the first of the burst through at once.
    const some = { interval: 100, burst: 2, delay: 1 }
    tat = 0
    const waits = []
    for (let i = 0; i < 3; i++) {
      const verdict = judge(tat, some, 5000)
      tat = verdict.tat
      waits.push(verdict.wait)
    }
    assert.deepEqual(waits, [0, 0, 100])
    // Past the refusal's wait, the next one is admitted.
    assert.equal(judge(tat, rule, 5100).admitted, true)
  })

  it('should count what others admitted as if admitted here', () => {
    const rule = { interval: 100, burst: 0, delay: Infinity }
    assert.equal(addAdmitted(0, 3, 100, 1000), 1300)
    assert.equal(addAdmitted(1500, 2, 100, 1000), 1700)
    assert.equal(addAdmitted(1500, 0, 100, 1000), 1500)
    assert.equal(judge(addAdmitted(0, 3, 100, 1000), rule, 1200).admitted, false)
    assert.deepEqual(judge(addAdmitted(0, 3, 100, 1000), rule, 1300).admitted, true)
  })
})
