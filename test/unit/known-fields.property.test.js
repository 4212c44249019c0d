'use strict'

// svr's HTTP/1.1 response sets and reads header fields with the lower-case
// form of a name made once (lib/pipeline/request/known-fields.js). Whatever
// application code does with the header methods, it must see what Node's own
// response would show: the same results, the same errors, the same head.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { inspect } = require('node:util')
const fc = require('fast-check')
const { SvrServerResponse } = require('../../lib/pipeline/request/tolerant-response')
const { knownName } = require('../../lib/util/header-names')

// What a ServerResponse reads of its request when it is made.
function fakeRequest (method) {
  return { method, httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }
}

function response (Class, method) {
  const res = new Class(fakeRequest(method))
  // The Date field would differ by the clock between the two heads.
  res.sendDate = false
  return res
}

// The outcome of one call: its result, or the code of what it threw.
function outcome (call) {
  try {
    const result = call()
    return { result: result instanceof http.ServerResponse ? 'this' : result }
  } catch (err) {
    return { threw: err.code }
  }
}

// Names in several spellings of the same field, one Node matches on
// (Content-Length), one HTTP/2 would drop (Connection), names an object
// holds in its own ways (inherited ones, array indexes), invalid ones, and
// what is not a string at all.
const NAMES = [1, 5, undefined, null, '123', '1', '4294967295', '__proto__', 'constructor', 'toString', 'Content-Type', 'content-type', 'CONTENT-TYPE', 'Content-Length', 'content-length', 'ETag', 'etag',
  'X-Request-Id', 'x-request-id', 'Vary', 'Set-Cookie', 'Connection', 'Keep-Alive', 'Transfer-Encoding', 'Date', 'X-Custom', 'x-custom',
  'Bad Name', 'bad:name', '', 'Ünicode']
const VALUES = fc.oneof(
  fc.constantFrom('text/html', 'nosniff', '"1-2-3"', 'close', 'keep-alive', 'a\tb', 'caf\u00e9', '', 'x'.repeat(200)),
  // Control characters, a line break and a character above U+00FF: Node refuses them.
  fc.constantFrom('a\nb', 'a\rInjected: 1', '\u0000', '\u0100', 'snow \u2603', '\u007f'),
  fc.integer({ min: -5, max: 100000 }),
  fc.constant(Number.NaN),
  fc.array(fc.constantFrom('a=1', 'b=2', 'bad\nc'), { maxLength: 3 }),
  fc.constantFrom(undefined, null, true, 12n)
)
const NAME = fc.constantFrom(...NAMES)
const STRING_NAME = fc.constantFrom(...NAMES.filter((name) => typeof name === 'string' && name !== ''))
const OPERATION = fc.oneof(
  fc.record({ op: fc.constant('setHeader'), name: NAME, value: VALUES }),
  fc.record({ op: fc.constant('setHeaders'), pairs: fc.array(fc.tuple(STRING_NAME, VALUES), { maxLength: 3 }) }),
  fc.record({ op: fc.constant('getHeader'), name: NAME }),
  fc.record({ op: fc.constant('hasHeader'), name: NAME }),
  fc.record({ op: fc.constant('removeHeader'), name: NAME }),
  fc.record({ op: fc.constant('appendHeader'), name: NAME, value: VALUES })
)

function apply (res, { op, name, value, pairs }) {
  if (op === 'setHeaders') return outcome(() => res.setHeaders(new Map(pairs)))
  return op === 'setHeader' || op === 'appendHeader' ? outcome(() => res[op](name, value)) : outcome(() => res[op](name))
}

// Everything Node shows of the fields, and the head it writes.
function fieldsOf (res) {
  return {
    headers: { ...res.getHeaders() },
    names: res.getHeaderNames(),
    raw: res.getRawHeaderNames()
  }
}

// The head by writeHead(status), or with fields of its own (an object or
// name, value pairs), which Node sets through the header methods.
const HEAD = fc.record({
  status: fc.constantFrom(200, 204, 304, 404),
  fields: fc.oneof(
    fc.constant(undefined),
    fc.dictionary(STRING_NAME, VALUES, { maxKeys: 3 }),
    fc.array(fc.tuple(STRING_NAME, fc.string({ maxLength: 8 })), { maxLength: 3 }).map((pairs) => pairs.flat())
  )
})

function headOf (res, { status, fields }) {
  const written = outcome(() => fields === undefined ? res.writeHead(status) : res.writeHead(status, fields))
  return { written, head: res._header }
}

describe('known header fields (svr\'s response against Node\'s)', () => {
  it('gives every call the result and error Node gives, and writes the same head', () => {
    fc.assert(fc.property(
      fc.array(OPERATION, { maxLength: 30 }), fc.constantFrom('GET', 'HEAD'), HEAD,
      (operations, method, head) => {
        const svr = response(SvrServerResponse, method)
        const node = response(http.ServerResponse, method)
        for (const operation of operations) {
          assert.deepEqual(apply(svr, operation), apply(node, operation), inspect(operation))
        }
        assert.deepEqual(fieldsOf(svr), fieldsOf(node))
        assert.deepEqual(headOf(svr, head), headOf(node, head))
        // After the head: Node's ERR_HTTP_HEADERS_SENT, and reads of what was sent.
        for (const operation of operations) {
          assert.deepEqual(apply(svr, operation), apply(node, operation), 'after the head: ' + inspect(operation))
        }
      }
    ), { numRuns: 2000 })
  })

  it('keeps the name as given and the value set last for a field set in two spellings', () => {
    const res = response(SvrServerResponse, 'GET')
    res.setHeader('content-type', 'text/plain')
    res.setHeader('Content-Type', 'text/html')
    res.setHeader('Content-Length', 5)
    assert.equal(res.getHeader('CONTENT-TYPE'), 'text/html')
    assert.equal(res.hasHeader('content-length'), true)
    assert.deepEqual(res.getRawHeaderNames(), ['Content-Type', 'Content-Length'])
    res.writeHead(200)
    assert.equal(res._header, 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n')
  })

  it('refuses a value with a line break every time, also after an accepted one', () => {
    const res = response(SvrServerResponse, 'GET')
    res.setHeader('X-Custom', 'fine')
    assert.throws(() => res.setHeader('X-Custom', 'fine\r\nSet-Cookie: a=1'), { code: 'ERR_INVALID_CHAR' })
    assert.throws(() => res.setHeader('X-Custom', 'fine\r\nSet-Cookie: a=1'), { code: 'ERR_INVALID_CHAR' })
    assert.equal(res.getHeader('X-Custom'), 'fine')
  })

  it('remembers a short checked value of a name, never a cookie or a long value', () => {
    const res = response(SvrServerResponse, 'GET')
    res.setHeader('X-Remembered', 'short')
    res.setHeader('Set-Cookie', 'sid=secret')
    res.setHeader('X-Long', 'x'.repeat(257))
    assert.equal(knownName('X-Remembered').valid, 'short')
    assert.equal(knownName('Set-Cookie').valid, null)
    assert.equal(knownName('X-Long').valid, null)
    assert.equal(res.getHeader('set-cookie'), 'sid=secret')
    assert.equal(res.getHeader('x-long'), 'x'.repeat(257))
  })
})
