'use strict'

const Negotiator = require('negotiator')

// Server preference when the client weighs codings alike. deflate is left
// out: SVR.JS labelled raw DEFLATE as `deflate`, which RFC 9110 defines as
// the zlib format, and every client that takes deflate also takes gzip.
const CODINGS = ['br', 'gzip', 'identity']
const PREFERENCE = { preferred: CODINGS }
const NONE = Object.freeze([])

/**
 * Negotiate a content coding from Accept-Encoding with its q-values
 * (`gzip;q=0` refuses gzip). Browsers send a handful of distinct values,
 * so results are kept per header value in a small bounded map.
 * @param {{maxEntries?: number}} [options]
 * @returns {(req: import('node:http').IncomingMessage) => readonly string[]}
 *   the acceptable codings among br and gzip that the client prefers to
 *   identity, best first; empty when identity is as good or nothing else is
 *   acceptable (a client that refuses identity too still gets identity, as
 *   RFC 9110 §12.5.3 allows, rather than a 406)
 */
function createEncodingNegotiator ({ maxEntries = 128 } = {}) {
  const known = new Map()
  return function acceptableCodings (req) {
    const header = req.headers['accept-encoding']
    if (header === undefined || header === '') return NONE
    let codings = known.get(header)
    if (codings === undefined) {
      codings = negotiate(req)
      if (known.size >= maxEntries) known.delete(known.keys().next().value)
      known.set(header, codings)
    }
    return codings
  }
}

function negotiate (req) {
  const preferred = new Negotiator(req).encodings(CODINGS, PREFERENCE)
  const identity = preferred.indexOf('identity')
  const codings = identity === -1 ? preferred : preferred.slice(0, identity)
  return codings.length === 0 ? NONE : Object.freeze(codings)
}

module.exports = { createEncodingNegotiator }
