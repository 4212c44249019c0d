'use strict'

// Failures before a response byte arrived that mean the upstream never got
// (or never started on) the request: another upstream may have it.
const UNREACHED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EPIPE', 'ENOTFOUND',
  'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT'])
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])
// undici refusing to send the request as it is: the request is to blame,
// not the upstream, and another upstream would refuse it the same way.
const REQUEST_REFUSED = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE'])

/**
 * What a failed exchange with an upstream means for the client.
 * @typedef {object} Failure
 * @property {number} status 504 for a timeout, 502 for everything else
 * @property {boolean} unreached whether the upstream cannot have started
 *   on the request (connect error, reset before a response byte), so an
 *   idempotent request without a body may go to another one
 * @property {boolean} requestRefused whether undici refused to send the
 *   request itself: no upstream is to blame, none other is tried
 * @property {string} reason one line for the error log
 */

/**
 * @param {Error & {code?: string}} err from undici, before the response headers
 * @param {boolean} [started] whether undici had begun sending the request
 *   (its onRequestStart): a failure before it, other than a refusal of the
 *   request, happened while connecting (a certificate that does not verify,
 *   a TLS alert), so the upstream never got the request
 * @returns {Failure}
 */
function failureOf (err, started = true) {
  const code = typeof err.code === 'string' ? err.code : ''
  const requestRefused = REQUEST_REFUSED.has(code)
  return {
    status: TIMEOUTS.has(code) ? 504 : 502,
    unreached: !requestRefused && (UNREACHED.has(code) || !started),
    requestRefused,
    reason: (code === '' ? '' : code + ': ') + err.message
  }
}

module.exports = { failureOf }
