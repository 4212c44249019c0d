'use strict'

const { validateHeaderName } = require('node:http')

// Connection-specific headers, which HTTP/2 forbids (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])
// Header names are few (svr's own, the configured ones, an application's):
// each is validated and lower-cased once, then looked up. A script that
// sets names it reads from requests cannot grow the table past this.
const MAX_KNOWN_NAMES = 512
// Values longer than this are checked every time: what is remembered is
// small, whatever a script sets.
const MAX_REMEMBERED_VALUE = 256
const knownNames = new Map()

/**
 * A header name a response has been given: its lower-case form, which is
 * the key of both Node's field table and svr's HTTP/2 one, and the last
 * value it was given that passed the value check, since most values repeat
 * from response to response (a file's type, its ETag, "nosniff"), and
 * comparing with the last one costs less than checking every character
 * again. A cookie is never remembered: its value is the client's secret,
 * and each is set once. Made once per name: lower-casing a name per call makes a new
 * string, which V8 must look up among its internalized strings before it
 * can be a property key (about a tenth of a static answer's own time in a
 * profile).
 */
class KnownName {
  /** @param {string} lower */
  constructor (lower) {
    this.lower = lower
    this.connectionSpecific = CONNECTION_SPECIFIC.has(lower)
    this.remembers = lower !== 'set-cookie'
    this.valid = null
  }

  /** @param {string} value a value of this name that passed Node's check */
  remember (value) {
    if (this.remembers && value.length <= MAX_REMEMBERED_VALUE) this.valid = value
  }

  /**
   * Take the next value as valid without checking it: for a value made by
   * svr of characters the check accepts (a request id), set next.
   * @param {string} value
   */
  vouch (value) {
    this.valid = value
  }
}

/**
 * The header fields of one response, by lower-case name: svr's HTTP/2
 * responses keep them so, and its HTTP/1.1 responses give Node one as their
 * field table. Its prototype is an empty object without a prototype of its
 * own, so that no name (not `constructor`, not `__proto__`) is inherited,
 * while the fields stay in V8's fast mode: an object from Object.create(null)
 * or `{ __proto__: null }` is a dictionary from the start, and Node reads the
 * fields of a head with for…in, which was three times slower over a
 * dictionary (Node's HTTP/2 processHeaders 2.0 against 0.5 µs per response
 * in a profile of `h2load -c50 -m10`).
 */
function FieldTable () {}
FieldTable.prototype = Object.create(null)

/**
 * @param {string} name a header name
 * @returns {KnownName}
 * @throws {TypeError} ERR_INVALID_HTTP_TOKEN, as Node's setHeader
 */
function knownName (name) {
  let known = knownNames.get(name)
  if (known === undefined) {
    validateHeaderName(name)
    known = new KnownName(name.toLowerCase())
    if (knownNames.size < MAX_KNOWN_NAMES) knownNames.set(name, known)
  }
  return known
}

/**
 * @param {string} name a header name
 * @returns {string} its lower-case form, without a new string for a name
 *   a response has been given (the stages ask for the names they set)
 */
function lowerCaseName (name) {
  const known = knownNames.get(name)
  return known !== undefined ? known.lower : name.toLowerCase()
}

/**
 * @param {unknown} name a header name
 * @returns {boolean} whether it names a connection-specific header, which HTTP/2 forbids
 */
function isConnectionSpecific (name) {
  return typeof name === 'string' && CONNECTION_SPECIFIC.has(lowerCaseName(name))
}

module.exports = { knownName, lowerCaseName, isConnectionSpecific, FieldTable }
