'use strict'

const DAY_MS = 24 * 60 * 60 * 1000
// Checks are spread over up to this share of their delay (at most an
// hour), so that a fleet restarted at once does not renew at once.
const JITTER_SHARE = 0.1
const JITTER_MAX_MS = 60 * 60 * 1000
// A certificate is never renewed before half its lifetime has passed. A
// renewBeforeDays at or over the lifetime (100 days with 90-day
// certificates, or any value with the 6-day ones CAs now issue) would
// otherwise make it due the moment it is issued, and every new certificate
// would be ordered again at once: 12 orders in 25 s were seen, which spends a
// CA's rate limits for the name (Let's Encrypt: 5 per week) within minutes.
const LARGEST_SHARE = 0.5
// The ACME certificates with the longest lifetime are 90 days (Let's
// Encrypt, ZeroSSL, Google Trust Services); renewing this many days before
// expiry would be due at once for every one of them.
const LONGEST_LIFETIME_DAYS = 90
// Orders of one name in an hour, whatever the configuration and the
// certificates' lifetimes: a safety net against a CA or a clock that gives
// certificates which are due at once.
const MAX_ORDERS_PER_HOUR = 12
const HOUR_MS = 60 * 60 * 1000

/**
 * @param {{notBefore: number, notAfter: number}} certificate
 * @param {number|null} renewBeforeDays null: when a third of the lifetime is left
 * @returns {{at: number, clamped: boolean}} when to renew it (ms since the
 *   epoch), and whether renewBeforeDays asked for earlier than half its lifetime
 */
function renewalPlan ({ notBefore, notAfter }, renewBeforeDays) {
  const lifetime = notAfter - notBefore
  if (renewBeforeDays === null) return { at: notAfter - lifetime / 3, clamped: false }
  const margin = renewBeforeDays * DAY_MS
  if (margin <= lifetime * LARGEST_SHARE) return { at: notAfter - margin, clamped: false }
  return { at: notAfter - lifetime * LARGEST_SHARE, clamped: true }
}

/**
 * @param {{notBefore: number, notAfter: number}} certificate
 * @param {number|null} renewBeforeDays
 * @returns {number} when to renew it, ms since the epoch
 */
function renewalTime (certificate, renewBeforeDays) {
  return renewalPlan(certificate, renewBeforeDays).at
}

/**
 * @param {*} renewBeforeDays acme.renewBeforeDays as configured
 * @returns {string|null} why it would renew every certificate at once
 */
function renewBeforeProblem (renewBeforeDays) {
  if (typeof renewBeforeDays !== 'number' || renewBeforeDays < LONGEST_LIFETIME_DAYS) return null
  return '/acme/renewBeforeDays: ' + renewBeforeDays + ' days is not shorter than the ' + LONGEST_LIFETIME_DAYS +
    '-day lifetime of the longest ACME certificates, so every certificate would be due for renewal the moment it is issued; ' +
    'use null (renew when a third of the lifetime is left) or fewer days'
}

/**
 * When each name's certificate is due, and how many orders each name may
 * still have this hour: at most MAX_ORDERS_PER_HOUR, whatever the
 * configuration (kept across reloads, as long as the manager).
 */
class RenewalSchedule {
  constructor (log) {
    this.log = log
    // name -> times of its orders in the last hour
    this.orders = new Map()
    // names whose clamped renewBeforeDays was said, since the last configuration
    this.warned = new Set()
  }

  /** A new configuration: say the clamping again. */
  configured () {
    this.warned.clear()
  }

  /**
   * @param {string} name
   * @param {{notBefore: number, notAfter: number}} certificate
   * @param {number|null} renewBeforeDays
   * @returns {number} when it is due, ms since the epoch; said once per
   *   name when renewBeforeDays asks for more than half its lifetime
   */
  dueAt (name, certificate, renewBeforeDays) {
    const plan = renewalPlan(certificate, renewBeforeDays)
    if (plan.clamped && !this.warned.has(name)) {
      this.warned.add(name)
      const days = Math.round((certificate.notAfter - certificate.notBefore) / DAY_MS * 100) / 100
      this.log.warn('acme: ' + name + ': renewBeforeDays ' + renewBeforeDays + ' is more than half the certificate\'s lifetime of ' + days +
        ' days; renewing it when half is left (' + new Date(plan.at).toISOString() + ') instead')
    }
    return plan.at
  }

  /**
   * Count an order of `name` now, if the ceiling allows one.
   * @param {string} name
   * @param {number} now ms since the epoch
   * @returns {number} 0 when the order may go (it is counted), else ms until one may
   */
  admit (name, now) {
    let times = this.orders.get(name)
    if (times === undefined) {
      times = []
      this.orders.set(name, times)
    }
    while (times.length !== 0 && times[0] <= now - HOUR_MS) times.shift()
    if (times.length >= MAX_ORDERS_PER_HOUR) {
      const wait = times[0] + HOUR_MS - now
      this.log.warn('acme: ' + name + ': ' + MAX_ORDERS_PER_HOUR + ' orders in the last hour, the most svr places for one name; the next in ' +
        Math.ceil(wait / 1000) + ' s')
      return wait
    }
    times.push(now)
    return 0
  }
}

// Let's Encrypt's rate-limit problems end "retry after 2026-11-29 12:00:00 UTC: see ...".
const RETRY_AFTER = /retry after (\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?\s*(?:UTC|Z)/i
// The longest wait a CA's words can impose (Let's Encrypt's longest window is a week).
const RATE_LIMIT_MAX_MS = 7 * DAY_MS

/**
 * @param {string|null} words what the CA said of a failed order
 * @param {number} now
 * @returns {number} ms until the rate limit it names resets; 0 when it names none
 */
function rateLimitWait (words, now) {
  const match = typeof words === 'string' ? RETRY_AFTER.exec(words) : null
  if (match === null) return 0
  const at = Date.parse(match[1] + 'T' + match[2] + 'Z')
  return Number.isFinite(at) ? Math.min(Math.max(at - now, 0), RATE_LIMIT_MAX_MS) : 0
}

function jittered (delay) {
  const spread = Math.min(Math.max(delay, 0) * JITTER_SHARE, JITTER_MAX_MS)
  return Math.max(0, Math.floor(delay - Math.random() * spread))
}

module.exports = { renewalTime, renewalPlan, renewBeforeProblem, RenewalSchedule, rateLimitWait, jittered, DAY_MS, MAX_ORDERS_PER_HOUR, LARGEST_SHARE }
