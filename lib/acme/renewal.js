'use strict'

const DAY_MS = 24 * 60 * 60 * 1000
// Checks are spread over up to this share of their delay (at most an
// hour), so that a fleet restarted at once does not renew at once.
const JITTER_SHARE = 0.1
const JITTER_MAX_MS = 60 * 60 * 1000

/**
 * @param {{notBefore: number, notAfter: number}} certificate
 * @param {number|null} renewBeforeDays null: when a third of the lifetime is left
 * @returns {number} when to renew it, ms since the epoch
 */
function renewalTime ({ notBefore, notAfter }, renewBeforeDays) {
  const margin = renewBeforeDays === null ? (notAfter - notBefore) / 3 : renewBeforeDays * DAY_MS
  return notAfter - margin
}

function jittered (delay) {
  const spread = Math.min(Math.max(delay, 0) * JITTER_SHARE, JITTER_MAX_MS)
  return Math.max(0, Math.floor(delay - Math.random() * spread))
}

module.exports = { renewalTime, jittered, DAY_MS }
