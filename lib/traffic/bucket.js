'use strict'

/**
 * nginx's `limit_req` as the generic cell rate algorithm (GCRA): a key's
 * state is one number, its theoretical arrival time (TAT): when its bucket
 * would be empty had every admitted request leaked out at the rate. A
 * request at `now` finds `excess = (max(TAT, now) - now) / interval`
 * requests still in the bucket: over `burst` it is refused, else admitted
 * and the TAT moves on by one interval. nginx keeps "excess" and "last"
 * instead; the two agree (its first request of a key is admitted, a second
 * one sooner than the interval with no burst is refused).
 */

/**
 * @typedef {object} RateRule
 * @property {number} interval ms between requests at the rate (1000 / requests per second)
 * @property {number} burst requests that may be in the bucket beyond the one at the rate
 * @property {number} delay requests of the burst admitted at once; those beyond
 *   wait until the bucket has leaked down to them (Infinity: `nodelay`)
 */

/**
 * What the bucket says of one request.
 * @typedef {object} Verdict
 * @property {boolean} admitted
 * @property {number} wait ms: for an admitted request, how long it waits
 *   before it goes on (0 with `nodelay`); for a refused one, until one
 *   would be admitted (Retry-After)
 * @property {number} remaining requests that would still be admitted now, after this one
 * @property {number} tat the key's TAT had the request been admitted
 */

/**
 * @param {number} tat the key's TAT (0 for a key not seen)
 * @param {RateRule} rule
 * @param {number} now ms
 * @returns {Verdict}
 */
function judge (tat, rule, now) {
  const start = tat > now ? tat : now
  const excess = (start - now) / rule.interval
  if (excess > rule.burst) {
    return { admitted: false, wait: Math.ceil(start - now - rule.burst * rule.interval), remaining: 0, tat }
  }
  const wait = excess > rule.delay ? Math.ceil((excess - rule.delay) * rule.interval) : 0
  return { admitted: true, wait, remaining: Math.floor(rule.burst - excess), tat: start + rule.interval }
}

/**
 * The TAT once `count` requests that other workers (or instances) admitted
 * are added to a key: they filled the same bucket.
 * @param {number} tat
 * @param {number} count
 * @param {number} interval
 * @param {number} now
 * @returns {number}
 */
function addAdmitted (tat, count, interval, now) {
  if (count === 0) return tat
  return (tat > now ? tat : now) + count * interval
}

module.exports = { judge, addAdmitted }
