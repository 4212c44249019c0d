'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { FillLocks } = require('../../lib/cache/fill-locks')

// Timers the test fires by hand.
function manualTimers () {
  const pending = new Set()
  return {
    setTimer: (fn) => { const timer = { fn }; pending.add(timer); return timer },
    clearTimer: (timer) => pending.delete(timer),
    fireAll: () => { for (const timer of [...pending]) { pending.delete(timer); timer.fn() } },
    get count () { return pending.size }
  }
}

const settled = (promise) => Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve('pending')))])

describe('one fill per key', () => {
  it('should let the first miss fill and the others wait for it', async () => {
    const timers = manualTimers()
    const locks = new FillLocks({ timeout: 1000, ...timers })
    const [a, b, c] = ['a', 'b', 'c'].map((name) => ({ name }))
    assert.equal(await locks.acquire('k', a), 'fill')
    const waits = [locks.acquire('k', b), locks.acquire('k', c)]
    assert.deepEqual(await Promise.all(waits.map(settled)), ['pending', 'pending'])
    // Another key is not held up.
    assert.equal(await locks.acquire('other', b), 'fill')
    // Only the holder's release counts.
    locks.release('k', b, true)
    assert.deepEqual(await Promise.all(waits.map(settled)), ['pending', 'pending'])
    locks.release('k', a, true)
    assert.deepEqual(await Promise.all(waits), ['filled', 'filled'])
    // The key is free again.
    assert.equal(await locks.acquire('k', c), 'fill')
  })

  it('should tell a miss from before a fill stored the key to read it, not to fill it again', async () => {
    const locks = new FillLocks({ timeout: 1000, ...manualTimers() })
    const [a, b] = ['a', 'b'].map((name) => ({ name }))
    const missedBefore = Date.now() - 1
    assert.equal(await locks.acquire('k', a, missedBefore), 'fill')
    locks.release('k', a, true)
    // B looked before A stored, and asks after A's lock is gone.
    assert.equal(await locks.acquire('k', b, missedBefore), 'filled')
    // A miss after the store (the entry purged since) fills again.
    assert.equal(await locks.acquire('k', b, Date.now() + 1), 'fill')
    locks.release('k', b, false)
    locks.forgetStored('k')
    assert.equal(await locks.acquire('k', a, missedBefore), 'fill')
  })

  it('should tell the waiters a fill failed, so that each goes upstream', async () => {
    const locks = new FillLocks({ timeout: 1000, ...manualTimers() })
    const [a, b] = [{}, {}]
    await locks.acquire('k', a)
    const wait = locks.acquire('k', b)
    locks.release('k', a, false)
    assert.equal(await wait, 'failed')
  })

  it('should hand the fill to the next waiter when the holder takes too long or is gone', async () => {
    const timers = manualTimers()
    const locks = new FillLocks({ timeout: 1000, ...timers })
    const [a, b, c] = [{}, {}, {}]
    await locks.acquire('k', a)
    const second = locks.acquire('k', b)
    const third = locks.acquire('k', c)
    timers.fireAll()
    assert.equal(await second, 'fill')
    assert.equal(await settled(third), 'pending')
    // The late holder's release no longer counts.
    locks.release('k', a, true)
    assert.equal(await settled(third), 'pending')
    locks.forget(b)
    assert.equal(await third, 'fill')
    locks.release('k', c, true)
    assert.equal(locks.locks.size, 0)
    assert.equal(timers.count, 0)
    // Three fills began (a, then b and c in turn); two were taken from their holder.
    assert.deepEqual(locks.counts, { started: 3, stored: 1, unstored: 0, abandoned: 2 })
  })

  it('should count every fill begun, and how each ended', async () => {
    const locks = new FillLocks({ timeout: 1000, ...manualTimers() })
    const [a, b] = [{}, {}]
    await locks.acquire('k', a)
    assert.equal(locks.tryAcquire('k', b), 'busy')
    locks.release('k', a, false)
    assert.equal(locks.tryAcquire('k', b), 'fill')
    locks.release('k', b, true)
    // A release by a worker that holds nothing is no fill.
    locks.release('k', b, true)
    assert.deepEqual(locks.counts, { started: 2, stored: 1, unstored: 1, abandoned: 0 })
  })
})
