'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { LoginThrottle, networkOf, DEFAULTS } = require('../../lib/auth/throttle')

function clock () {
  const c = { now: 1e9 }
  c.fn = () => c.now
  return c
}

// Attempts one after the other; the longest lock any of them was told of.
function attempts (throttle, n, address, user) {
  let locked = 0
  for (let i = 0; i < n; i++) locked = Math.max(locked, throttle.attempt(address, typeof user === 'function' ? user(i) : user))
  return locked
}

describe('LoginThrottle', () => {
  it('should lock a user from one address after userLimit attempts, not elsewhere', () => {
    const c = clock()
    const locks = []
    const throttle = new LoginThrottle({ now: c.fn, onLock: (what, s) => locks.push([what, s]) })
    assert.equal(attempts(throttle, DEFAULTS.userLimit, '203.0.113.5', 'alice'), 0)
    assert.equal(throttle.check('203.0.113.5', 'alice'), 0)
    assert.equal(throttle.attempt('203.0.113.5', 'alice'), 300)
    assert.equal(throttle.check('203.0.113.5', 'alice'), 300)
    assert.equal(throttle.check('198.51.100.7', 'alice'), 0)
    assert.equal(throttle.attempt('198.51.100.7', 'alice'), 0)
    assert.equal(throttle.check('203.0.113.5', 'bob'), 0)
    assert.equal(throttle.check('203.0.113.5', null), 0)
    assert.deepEqual(locks, [['user "alice" from 203.0.113.5', 300]])
    c.now += 120 * 1000
    assert.equal(throttle.check('203.0.113.5', 'alice'), 180)
    assert.equal(throttle.attempt('203.0.113.5', 'alice'), 180)
  })

  it('should lock an address that tries many names', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn })
    assert.equal(attempts(throttle, DEFAULTS.addressLimit, '203.0.113.9', (i) => 'user' + i), 0)
    assert.equal(throttle.attempt('203.0.113.9', 'someone'), 300)
    assert.equal(throttle.check('203.0.113.9', null), 300)
    assert.equal(throttle.check('203.0.113.9', 'never-tried'), 300)
    assert.equal(throttle.check('203.0.113.10', 'user1'), 0)
  })

  it('should not count attempts while locked, and double the next lock', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn, userLimit: 4, addressLimit: 100 })
    assert.equal(attempts(throttle, 4, '192.0.2.1', 'alice'), 0)
    assert.equal(throttle.attempt('192.0.2.1', 'alice'), 300)
    assert.equal(attempts(throttle, 50, '192.0.2.1', 'alice'), 300)
    c.now += 300 * 1000
    assert.equal(throttle.check('192.0.2.1', 'alice'), 0)
    // Half the limit relocks, for twice as long.
    assert.equal(attempts(throttle, 2, '192.0.2.1', 'alice'), 0)
    assert.equal(throttle.attempt('192.0.2.1', 'alice'), 600)
    c.now += 600 * 1000
    assert.equal(attempts(throttle, 2, '192.0.2.1', 'alice'), 0)
    assert.equal(throttle.attempt('192.0.2.1', 'alice'), 1200)
  })

  it('should cap the lock at maxLockMs', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn, userLimit: 2, addressLimit: 1000, lockMs: 1000, maxLockMs: 3000 })
    const seen = []
    for (let i = 0; i < 4; i++) {
      seen.push(attempts(throttle, 3, '192.0.2.1', 'a'))
      c.now += 10000
    }
    assert.deepEqual(seen, [1, 2, 3, 3])
  })

  it('should clear the user counter on success and give back only its own attempt', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn })
    attempts(throttle, DEFAULTS.userLimit - 1, '192.0.2.7', 'alice')
    assert.equal(throttle.attempt('192.0.2.7', 'alice'), 0)
    throttle.succeed('192.0.2.7', 'alice')
    assert.equal(attempts(throttle, DEFAULTS.userLimit, '192.0.2.7', 'alice'), 0)
    // 4 failed attempts before the success and 5 after: one more is allowed.
    assert.equal(throttle.attempt('192.0.2.7', 'bob'), 0)
    assert.equal(throttle.attempt('192.0.2.7', 'bob'), 300)
  })

  it('should clear the user counter without a refund for a login it did not count', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn, addressLimit: 6 })
    attempts(throttle, 4, '192.0.2.5', 'alice')
    throttle.succeed('192.0.2.5', 'alice', false)
    assert.equal(attempts(throttle, 2, '192.0.2.5', 'alice'), 0)
    assert.equal(throttle.attempt('192.0.2.5', 'alice'), 300)
  })

  it('should not count an attempt refused by a user lock against the address', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn, userLimit: 2, addressLimit: 4 })
    assert.equal(attempts(throttle, 2, '192.0.2.3', 'a'), 0)
    assert.equal(throttle.attempt('192.0.2.3', 'a'), 300)
    assert.equal(throttle.attempt('192.0.2.3', 'a'), 300)
    assert.equal(attempts(throttle, 2, '192.0.2.3', 'b'), 0)
    assert.equal(throttle.attempt('192.0.2.3', 'c'), 300)
  })

  it('should forget attempts after a quiet forgetMs', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn })
    attempts(throttle, DEFAULTS.userLimit, '192.0.2.8', 'alice')
    c.now += DEFAULTS.forgetMs
    assert.equal(throttle.attempt('192.0.2.8', 'alice'), 0)
    assert.equal(throttle.size, 2)
  })

  it('should hold no more than maxKeys per table however many clients try', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn })
    for (let i = 0; i < 25000; i++) throttle.attempt('10.' + (i >> 16) + '.' + ((i >> 8) & 255) + '.' + (i & 255), 'u' + i)
    assert.equal(throttle.addresses.size, DEFAULTS.maxKeys)
    assert.equal(throttle.pairs.size, DEFAULTS.maxKeys)
    // The most recent keys are the ones kept.
    attempts(throttle, DEFAULTS.userLimit - 1, '10.0.97.167', 'u24999')
    assert.equal(throttle.attempt('10.0.97.167', 'u24999'), 300)
  })

  it('should drop expired keys before evicting live ones', () => {
    const c = clock()
    const throttle = new LoginThrottle({ now: c.fn, maxKeys: 3 })
    throttle.attempt('192.0.2.1', 'a')
    throttle.attempt('192.0.2.2', 'a')
    c.now += DEFAULTS.forgetMs
    throttle.attempt('192.0.2.3', 'a')
    assert.equal(throttle.addresses.size, 1)
  })

  it('should key long names by a hash of bounded size', () => {
    const throttle = new LoginThrottle()
    const long = 'x'.repeat(10000)
    assert.equal(attempts(throttle, DEFAULTS.userLimit + 1, '192.0.2.9', long), 300)
    assert.ok(throttle.check('192.0.2.9', long) > 0)
    assert.equal(throttle.check('192.0.2.9', long + 'y'), 0)
    for (const key of throttle.pairs.entries.keys()) assert.ok(key.length < 200)
  })

  it('should count IPv6 clients per /64', () => {
    const throttle = new LoginThrottle()
    attempts(throttle, DEFAULTS.userLimit + 1, '2001:db8:1:2::1', 'alice')
    assert.equal(throttle.check('2001:db8:1:2:ffff:eeee:dddd:cccc', 'alice'), 300)
    assert.equal(throttle.check('2001:db8:1:3::1', 'alice'), 0)
  })
})

describe('networkOf', () => {
  it('should keep IPv4 and reduce IPv6 to its /64', () => {
    assert.equal(networkOf('192.0.2.1'), '192.0.2.1')
    assert.equal(networkOf('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(networkOf('2001:0DB8:0:1:ffff::1'), '2001:db8:0:1::/64')
    assert.equal(networkOf('::1'), '0:0:0:0::/64')
    assert.equal(networkOf('fe80::1%eth0'), 'fe80:0:0:0::/64')
    assert.equal(networkOf('2001:db8:a:b:c:d:192.0.2.1'), '2001:db8:a:b::/64')
    assert.equal(networkOf(''), '')
  })
})
