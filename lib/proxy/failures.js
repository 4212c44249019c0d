'use strict'

// Failures before a response byte arrived that mean the upstream never got
// (or never started on) the request: another upstream may have it.
const UNREACHED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EPIPE', 'ENOTFOUND',
  'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT'])
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/**
 * What a failed exchange with an upstream means for the client.
 * @typedef {object} Failure
 * @property {number} status 504 for a timeout, 502 for everything else
 * @property {boolean} unreached whether the upstream cannot have started
 *   on the request (connect error, reset before a response byte), so an
 *   idempotent request without a body may go to another one
 * @property {string} reason one line for the error log
 */

/**
 * @param {Error & {code?: string}} err from undici, before the response headers
 * @returns {Failure}
 */
function failureOf (err) {
  const code = typeof err.code === 'string' ? err.code : ''
  return {
    status: TIMEOUTS.has(code) ? 504 : 502,
    unreached: UNREACHED.has(code),
    reason: (code === '' ? '' : code + ': ') + err.message
  }
}

module.exports = { failureOf }
