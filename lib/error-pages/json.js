'use strict'

const Negotiator = require('negotiator')
const { reasonPhrase } = require('./pages')
const { plainDescription } = require('./descriptions')

// Offered in this order: among types the client rates the same, the page
// comes first, so that `*/*` (curl, most libraries) keeps getting it.
const OFFERS = ['text/html', 'application/json', 'application/problem+json']

/**
 * Whether a client asks for errors as JSON: its Accept rates
 * application/json or application/problem+json above text/html (an API
 * client's `application/json, text/plain, *\/*` does; a browser's does not).
 * @param {{headers: object}} req
 * @returns {string|null} the JSON type to answer with, null for a page
 */
function jsonErrorType (req) {
  const accept = req.headers.accept
  // Most requests name no JSON type at all: no negotiation for them.
  if (typeof accept !== 'string' || accept.indexOf('json') === -1) return null
  const type = new Negotiator({ headers: { accept } }).mediaType(OFFERS)
  return type === undefined || type === 'text/html' ? null : type
}

/**
 * An error as an RFC 9457 problem document, with the request id the logs show.
 * @param {number} status
 * @param {{description?: string}} extra sendError's
 * @param {string|null} requestId
 * @returns {string}
 */
function jsonErrorBody (status, extra, requestId) {
  return JSON.stringify({ type: 'about:blank', title: reasonPhrase(status), status, detail: plainDescription(status, extra), requestId }) + '\n'
}

module.exports = { jsonErrorType, jsonErrorBody }
