'use strict'

const http = require('node:http')
const { knownName, lowerCaseName, FieldTable } = require('../../util/header-names')

// Node keeps a response's fields under a private symbol: an object of
// lower-case name → [name as given, value], which writeHead and
// getHeaders read. Found by its description; a Node without it leaves
// Node's own header methods in place (withKnownFields).
const kOutHeaders = Object.getOwnPropertySymbols(new http.OutgoingMessage())
  .find((symbol) => symbol.description === 'kOutHeaders')
// What Node's value check rejects (its checkInvalidHeaderChar): a value
// with one of these goes to Node's setHeader, which throws, or accepts it
// when the server parses leniently.
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/
// Names whose removal Node's removeHeader notes even when no such field
// was set: it then leaves out the Connection, Content-Length,
// Transfer-Encoding or Date it would have added.
const REMOVAL_REMEMBERED = new Set(['connection', 'content-length', 'transfer-encoding', 'date'])

/**
 * Node's setHeader, getHeader and hasHeader lower-case the name on every
 * call, and V8 then looks the new string up among its internalized ones
 * before it can use it as a key: a static answer sets eight fields and asks
 * for three. These do the same into Node's own field table, with the
 * lower-case form of a name made once (lib/util/header-names.js), and so
 * does removeHeader for a field that is not there; everything else Node
 * does with the fields (writeHead, getHeaders, the head it writes) is
 * unchanged. The table itself is one in V8's fast mode, which Node walks
 * faster when it writes the head. A value that is not a plain string or
 * number, or that the check rejects, and every call after the head is
 * sent, take Node's own method.
 * @template {new (...args: any[]) => import('node:http').ServerResponse} T
 * @param {T} Base
 * @returns {T}
 */
function withKnownFields (Base) {
  if (kOutHeaders === undefined) return Base
  return class extends Base {
    setHeader (name, value) {
      if (this._header || typeof name !== 'string') return super.setHeader(name, value)
      const known = knownName(name)
      if (typeof value !== 'number' && value !== known.valid) {
        if (typeof value !== 'string' || INVALID_VALUE_CHAR.test(value)) return super.setHeader(name, value)
        known.remember(value)
      }
      let fields = this[kOutHeaders]
      if (fields === null) this[kOutHeaders] = fields = new FieldTable()
      fields[known.lower] = [name, value]
      return this
    }

    getHeader (name) {
      if (typeof name !== 'string') return super.getHeader(name)
      const fields = this[kOutHeaders]
      if (fields === null) return undefined
      const entry = fields[lowerCaseName(name)]
      return entry === undefined ? undefined : entry[1]
    }

    // An error page clears seven representation fields that are seldom
    // there; Node's removeHeader lower-cases each name and deletes it
    // anyway. A field that is not there is left alone, unless its name is
    // one whose removal Node remembers (it then adds no field of its own).
    removeHeader (name) {
      if (this._header || typeof name !== 'string') return super.removeHeader(name)
      const lower = lowerCaseName(name)
      const fields = this[kOutHeaders]
      if ((fields === null || fields[lower] === undefined) && !REMOVAL_REMEMBERED.has(lower)) return
      super.removeHeader(name)
    }

    hasHeader (name) {
      if (typeof name !== 'string') return super.hasHeader(name)
      const fields = this[kOutHeaders]
      return fields !== null && fields[lowerCaseName(name)] !== undefined
    }
  }
}

module.exports = { withKnownFields }
