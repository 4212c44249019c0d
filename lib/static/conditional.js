'use strict'

const { etagListMatches } = require('./etag')

/**
 * Evaluate the preconditions of a GET or HEAD in the order of RFC 9110
 * §13.2.2, for the coded representations that svr writes itself (send
 * evaluates them for the identity ones). As send (through `fresh`) does, a
 * request with `Cache-Control: no-cache` gets the full body rather than a
 * 304, so both paths answer a hard reload alike.
 * @param {import('node:http').IncomingHttpHeaders} headers request headers
 * @param {string|null} etag the representation's tag, null when ETags are off
 * @param {number} lastModified Last-Modified in ms, whole seconds as sent
 * @returns {number} 0: send the representation; 304 or 412
 */
function checkPreconditions (headers, etag, lastModified) {
  const ifMatch = headers['if-match']
  if (ifMatch !== undefined) {
    if (!etagListMatches(ifMatch, etag, false)) return 412
  } else {
    const unmodifiedSince = parseHttpDate(headers['if-unmodified-since'])
    if (!Number.isNaN(unmodifiedSince) && lastModified > unmodifiedSince) return 412
  }
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch !== undefined) {
    return etagListMatches(ifNoneMatch, etag, true) && !hasNoCache(headers) ? 304 : 0
  }
  const modifiedSince = parseHttpDate(headers['if-modified-since'])
  if (!Number.isNaN(modifiedSince) && lastModified <= modifiedSince && !hasNoCache(headers)) return 304
  return 0
}

/**
 * @param {string|undefined} value an HTTP-date
 * @returns {number} ms since the epoch, NaN when absent or invalid
 */
function parseHttpDate (value) {
  return value === undefined ? NaN : Date.parse(value)
}

function hasNoCache (headers) {
  const cacheControl = headers['cache-control']
  if (cacheControl === undefined) return false
  const at = cacheControl.toLowerCase().indexOf('no-cache')
  if (at === -1) return false
  const before = at === 0 ? 0x2c : cacheControl.charCodeAt(at - 1)
  const after = at + 8 === cacheControl.length ? 0x2c : cacheControl.charCodeAt(at + 8)
  return (before === 0x2c || before === 0x20 || before === 0x09) && (after === 0x2c || after === 0x20 || after === 0x09)
}

module.exports = { checkPreconditions }
