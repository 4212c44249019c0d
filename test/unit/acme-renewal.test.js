'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { renewalPlan, renewBeforeProblem, RenewalSchedule, rateLimitWait, DAY_MS, MAX_ORDERS_PER_HOUR } = require('../../lib/acme/renewal')

const HOUR = 60 * 60 * 1000

describe('renewalPlan(certificate, renewBeforeDays)', () => {
  it('should renew when a third of the lifetime is left by default, and renewBeforeDays before expiry otherwise', () => {
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 90 * DAY_MS }, null), { at: 60 * DAY_MS, clamped: false })
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 90 * DAY_MS }, 10), { at: 80 * DAY_MS, clamped: false })
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 90 * DAY_MS }, 45), { at: 45 * DAY_MS, clamped: false })
  })

  it('should hold a renewBeforeDays over half the lifetime at half: 100 days of 90, 2 days of 6', () => {
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 90 * DAY_MS }, 100), { at: 45 * DAY_MS, clamped: true })
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 6 * DAY_MS }, 2), { at: 4 * DAY_MS, clamped: false })
    assert.deepEqual(renewalPlan({ notBefore: 0, notAfter: 6 * DAY_MS }, 3.5), { at: 3 * DAY_MS, clamped: true })
    // 15-second certificates with the default 30 days.
    assert.deepEqual(renewalPlan({ notBefore: 1000, notAfter: 16000 }, 30), { at: 8500, clamped: true })
  })

  it('should never make a certificate due before half its lifetime, whatever renewBeforeDays', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 400 * DAY_MS }),
      fc.option(fc.double({ min: 0.0001, max: 10000, noNaN: true }), { nil: null }),
      (notBefore, lifetime, days) => {
        const { at } = renewalPlan({ notBefore, notAfter: notBefore + lifetime }, days)
        return at >= notBefore + lifetime / 2 && at <= notBefore + lifetime
      }))
  })
})

describe('renewBeforeProblem(renewBeforeDays)', () => {
  it('should refuse 90 days and more, and nothing else', () => {
    assert.equal(renewBeforeProblem(null), null)
    assert.equal(renewBeforeProblem(89.9), null)
    assert.match(renewBeforeProblem(90), /^\/acme\/renewBeforeDays: 90 days is not shorter than the 90-day lifetime/)
    assert.match(renewBeforeProblem(1000), /^\/acme\/renewBeforeDays: 1000 days/)
  })
})

describe('RenewalSchedule', () => {
  it('should admit ' + MAX_ORDERS_PER_HOUR + ' orders of a name in an hour, then say when the next may go', () => {
    const schedule = new RenewalSchedule({ warn () {} })
    const start = 1e12
    for (let i = 0; i < MAX_ORDERS_PER_HOUR; i++) assert.equal(schedule.admit('a.example', start + i * 1000), 0)
    assert.equal(schedule.admit('a.example', start + 20000), HOUR - 20000)
    // Refused orders are not counted; other names have their own.
    assert.equal(schedule.admit('a.example', start + 30000), HOUR - 30000)
    assert.equal(schedule.admit('b.example', start + 30000), 0)
    // Once the first has left the hour, one more.
    assert.equal(schedule.admit('a.example', start + HOUR), 0)
    assert.equal(schedule.admit('a.example', start + HOUR + 1), 1000 - 1)
  })

  it('should say once per name and configuration that it holds renewBeforeDays at half the lifetime', () => {
    const lines = []
    const schedule = new RenewalSchedule({ warn: (line) => lines.push(line) })
    const cert = { notBefore: Date.UTC(2026, 0, 1), notAfter: Date.UTC(2026, 0, 7) }
    for (let i = 0; i < 3; i++) assert.equal(schedule.dueAt('a.example', cert, 5), Date.UTC(2026, 0, 4))
    schedule.dueAt('a.example', cert, 2)
    assert.deepEqual(lines, ['acme: a.example: renewBeforeDays 5 is more than half the certificate\'s lifetime of 6 days; renewing it when half is left (2026-01-04T00:00:00.000Z) instead'])
    schedule.configured()
    schedule.dueAt('a.example', cert, 5)
    assert.equal(lines.length, 2)
  })
})

describe('rateLimitWait(words, now)', () => {
  it('should wait until the reset a CA names, at most a week, and not at all when it names none', () => {
    const now = Date.UTC(2026, 10, 28, 12, 0, 0)
    const words = 'too many certificates (5) already issued for this exact set of identifiers in the last 168h0m0s, retry after 2026-11-29 12:00:00 UTC: see https://letsencrypt.org/docs/rate-limits/'
    assert.equal(rateLimitWait(words, now), DAY_MS)
    assert.equal(rateLimitWait('rate limited, retry after 2026-11-28T12:00:30Z', now), 30000)
    assert.equal(rateLimitWait('retry after 2027-06-01 00:00:00 UTC', now), 7 * DAY_MS)
    assert.equal(rateLimitWait('retry after 2026-11-27 00:00:00 UTC', now), 0)
    for (const other of [null, 'Connection refused', 'retry after soon', 'retry after 2026-11-29 12:00:00']) assert.equal(rateLimitWait(other, now), 0, String(other))
  })
})
