'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { escapeLogValue, escapeBareLogValue } = require('../../lib/logging/escape')
const { formatCombined, createCombinedFormat, formatJson, clfTime, isoTime, accessFormatter } = require('../../lib/logging/format')
const { acceptableRequestId, newRequestId } = require('../../lib/logging/request-id')
const { AccessLog } = require('../../lib/logging/access-log')
const { parseCombined, unescapeLogValue } = require('../helpers/access-log')

function entry (fields = {}) {
  return {
    clientAddress: '192.0.2.7',
    authUser: null,
    time: Date.UTC(2000, 9, 10, 13, 55, 36),
    method: 'GET',
    originalUrl: '/apache_pb.gif',
    protocol: 'HTTP/1.0',
    status: 200,
    bytes: 2326,
    referer: 'http://www.example.com/start.html',
    userAgent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
    duration: 1.25,
    requestId: 'id-1',
    worker: '1',
    completed: true,
    ...fields
  }
}

describe('escapeLogValue', () => {
  it('should leave printable ASCII without quotes or backslashes alone', () => {
    const plain = 'Mozilla/5.0 (X11; Linux x86_64) <a href=\'x\'>{}</a>'
    assert.equal(escapeLogValue(plain), plain)
  })

  it('should write quotes, backslashes, control and non-ASCII bytes as \\xHH', () => {
    assert.equal(escapeLogValue('a"b\\c\nd\r\x1b[31m\x7f\xe9\t'), 'a\\x22b\\x5Cc\\x0Ad\\x0D\\x1B[31m\\x7F\\xE9\\x09')
  })

  it('should write characters beyond latin1 as their UTF-8 bytes', () => {
    assert.equal(escapeLogValue('\u20ac\u{1F600}'), '\\xE2\\x82\\xAC\\xF0\\x9F\\x98\\x80')
  })

  it('should escape spaces in an unquoted field', () => {
    assert.equal(escapeBareLogValue('John Doe'), 'John\\x20Doe')
    assert.equal(escapeLogValue('John Doe'), 'John Doe')
  })

  it('should be undone exactly for any latin1 string, and never contain a quote or a line end', () => {
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)) }), (value) => {
      const escaped = escapeLogValue(value)
      assert.match(escaped, /^[\x20-\x7e]*$/)
      assert.ok(!escaped.includes('"'))
      assert.equal(unescapeLogValue(escaped), value)
    }))
  })
})

describe('formatCombined', () => {
  it('should write Apache\'s combined format with the request id last', () => {
    assert.equal(formatCombined(entry()),
      '192.0.2.7 - - [10/Oct/2000:13:55:36 +0000] "GET /apache_pb.gif HTTP/1.0" 200 2326 ' +
      '"http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)" "id-1"\n')
  })

  it('should write "-" for absent headers, no user and no body', () => {
    const line = formatCombined(entry({ referer: undefined, userAgent: '', bytes: 0, status: 304 }))
    assert.match(line, / 304 - "-" "-" "id-1"\n$/)
  })

  it('should keep a hostile request inside its fields', () => {
    const line = formatCombined(entry({
      authUser: 'eve" 200',
      originalUrl: '/x" 200 1 "-" "-"\n127.0.0.1 - - [',
      userAgent: '" "forged'
    }))
    assert.equal(line.split('\n').length, 2)
    const fields = parseCombined(line.slice(0, -1))
    assert.equal(fields.request, 'GET /x" 200 1 "-" "-"\n127.0.0.1 - - [ HTTP/1.0')
    assert.equal(fields.userAgent, '" "forged')
    assert.equal(fields.user, 'eve\\x22\\x20200')
    assert.equal(fields.status, 200)
  })
})

// The combined line written plainly, field by field, to hold the
// formatter's kept fields against.
function combinedLine (e) {
  const quoted = (value) => value === undefined || value === '' ? '"-"' : '"' + escapeLogValue(value) + '"'
  const request = e.protocol === ''
    ? escapeLogValue(e.method)
    : escapeLogValue(e.method) + ' ' + escapeLogValue(e.originalUrl) + ' ' + escapeLogValue(e.protocol)
  const user = e.authUser === null || e.authUser === '' ? '-' : escapeBareLogValue(e.authUser)
  const upstream = e.upstream === null || e.upstream === undefined
    ? ''
    : ' upstream=' + escapeBareLogValue(e.upstream) + ' upstream_time=' + (e.upstreamTime < 0 ? '-' : (Math.round(e.upstreamTime) / 1000).toFixed(3))
  const rateLimit = e.rateLimit === null || e.rateLimit === undefined ? '' : ' rate_limit=' + e.rateLimit
  return escapeBareLogValue(e.clientAddress || '-') + ' - ' + user + ' [' + clfTime(e.time) + '] "' + request + '" ' +
    e.status + ' ' + (e.bytes === 0 ? '-' : e.bytes) + ' ' + quoted(e.referer) + ' ' + quoted(e.userAgent) +
    ' "' + e.requestId + '"' + upstream + rateLimit + (e.completed ? '\n' : ' aborted\n')
}

describe('createCombinedFormat', () => {
  it('should write every line of a run exactly, whatever lines came before', () => {
    const address = fc.constantFrom('192.0.2.7', '2001:db8::1', '', 'a b')
    const header = fc.option(fc.constantFrom('Mozilla/5.0', 'curl/8.0', '"quoted"', '', 'Mozilla/5.0 '), { nil: undefined })
    const second = Date.UTC(2000, 9, 10, 13, 55, 36)
    const line = fc.record({
      clientAddress: address,
      authUser: fc.constantFrom(null, '', 'eve', 'John Doe'),
      time: fc.constantFrom(second, second + 999, second + 1000, second - 1, second + 86_400_000),
      method: fc.constantFrom('GET', 'POST', 'BREW"', 'GET / HTTP/1.1 junk'),
      originalUrl: fc.constantFrom('/', '/a b', '/x"\n', ''),
      protocol: fc.constantFrom('HTTP/1.1', 'HTTP/2.0', 'HTTP/1.0', ''),
      status: fc.constantFrom(200, 404, 0, 1000, 599),
      bytes: fc.constantFrom(0, 1, 2326),
      referer: header,
      userAgent: header,
      upstream: fc.constantFrom(null, undefined, '127.0.0.1:8081', 'a b'),
      upstreamTime: fc.constantFrom(-1, 0, 12.4, 1500.5),
      rateLimit: fc.constantFrom(null, undefined, 'refused', 'dry-run'),
      completed: fc.boolean()
    })
    fc.assert(fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), (fields) => {
      const format = createCombinedFormat()
      for (const field of fields) assert.equal(format(entry(field)), combinedLine(entry(field)))
    }), { numRuns: 1000 })
  })

  it('should write only ASCII, whatever the client sent, as its formatter vouches to the sink', () => {
    const format = createCombinedFormat()
    assert.equal(format.ascii, true)
    // Node hands request bytes over as latin1; application code may set wider characters.
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string())
    const line = fc.record({
      clientAddress: text,
      authUser: fc.option(text, { nil: null }),
      method: text,
      originalUrl: text,
      protocol: fc.oneof(text, fc.constant('')),
      referer: fc.option(text, { nil: undefined }),
      userAgent: fc.option(text, { nil: undefined }),
      upstream: fc.option(text, { nil: null }),
      // A number, or what application code set res.statusCode to after the head went.
      status: fc.oneof(fc.integer(), fc.double(), text),
      bytes: fc.nat(),
      upstreamTime: fc.oneof(fc.constant(-1), fc.double({ min: 0, max: 1e9, noNaN: true })),
      rateLimit: fc.constantFrom(null, 'refused', 'delayed', 'dry-run'),
      requestId: fc.oneof(fc.constant(newRequestId()), fc.stringMatching(/^[A-Za-z0-9._:+=@/-]{1,128}$/)),
      completed: fc.boolean()
    })
    fc.assert(fc.property(line, (fields) => {
      const line = format(entry(fields))
      assert.equal(Buffer.byteLength(line, 'utf8'), line.length, line)
    }), { numRuns: 2000 })
  })
})

describe('clfTime', () => {
  it('should write the time in UTC as dd/Mon/yyyy:HH:MM:SS +0000', () => {
    assert.equal(clfTime(Date.UTC(2024, 0, 2, 3, 4, 5, 999)), '02/Jan/2024:03:04:05 +0000')
    assert.equal(clfTime(Date.UTC(2024, 11, 31, 23, 59, 59)), '31/Dec/2024:23:59:59 +0000')
  })
})

describe('isoTime', () => {
  it('should match Date#toISOString', () => {
    for (const ms of [0, 5, 42, 999, 1000, Date.UTC(2024, 1, 29, 23, 59, 59, 7), Date.now()]) {
      assert.equal(isoTime(ms), new Date(ms).toISOString())
    }
  })
})

describe('formatJson', () => {
  it('should write one JSON object per line with every field', () => {
    const line = formatJson(entry({ userAgent: Buffer.from('caf\u00e9').toString('latin1') }))
    assert.equal(line.indexOf('\n'), line.length - 1)
    const parsed = JSON.parse(line)
    assert.deepEqual(parsed, {
      time: '2000-10-10T13:55:36.000Z',
      address: '192.0.2.7',
      user: null,
      method: 'GET',
      target: '/apache_pb.gif',
      protocol: 'HTTP/1.0',
      status: 200,
      bytes: 2326,
      referer: 'http://www.example.com/start.html',
      userAgent: 'caf\u00e9',
      duration: 1.25,
      requestId: 'id-1',
      worker: '1',
      completed: true
    })
  })

  it('should escape line separators that line-based readers split on', () => {
    const line = formatJson(entry({ originalUrl: '/a\u2028b\u2029c\nd' }))
    assert.equal(line.split(/[\n\u2028\u2029]/).length, 2)
    assert.equal(JSON.parse(line).target, '/a\u2028b\u2029c\nd')
  })
})

describe('accessFormatter', () => {
  it('should vouch for the combined format\'s lines as ASCII to the sink, and not for JSON\'s', () => {
    for (const [name, ascii] of [['combined', true], ['json', false]]) {
      const written = []
      const log = new AccessLog('1')
      log.configure({ format: accessFormatter(name), sink: { write: (line, vouched) => written.push(vouched) } })
      log.report(entry({ userAgent: Buffer.from('caf\u00e9').toString('latin1') }))
      assert.deepEqual(written, [ascii], name)
    }
  })

  it('should pick the formatter once by name and refuse unknown names', () => {
    assert.equal(accessFormatter('combined')(entry()), formatCombined(entry()))
    assert.equal(accessFormatter('json'), formatJson)
    assert.throws(() => accessFormatter('common'), /unknown log format/)
    assert.throws(() => accessFormatter('constructor'), /unknown log format/)
  })
})

describe('request ids', () => {
  it('should generate distinct random UUIDs (version 4, variant 10), across the batches they are made in', () => {
    // 100 batches of 128 (lib/logging/request-id.js), and a part of one.
    const count = 12_850
    const ids = Array.from({ length: count }, newRequestId)
    assert.equal(new Set(ids).size, count)
    const malformed = ids.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))
    assert.deepEqual(malformed, [])
    // Every random digit position takes every value: each byte's two
    // nibbles are written, none stuck.
    const seen = Array.from({ length: 36 }, () => new Set())
    for (const id of ids) for (let i = 0; i < 36; i++) seen[i].add(id[i])
    const sizes = seen.map((digits) => digits.size)
    assert.deepEqual(sizes, [...'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'].map((c) => c === 'x' ? 16 : c === 'y' ? 4 : 1))
  })

  it('should accept only short ids of safe characters from a proxy', () => {
    assert.equal(acceptableRequestId('abc-123_x.y:z'), 'abc-123_x.y:z')
    assert.equal(acceptableRequestId('a'.repeat(128)), 'a'.repeat(128))
    assert.equal(acceptableRequestId('a'.repeat(129)), null)
    assert.equal(acceptableRequestId(''), null)
    assert.equal(acceptableRequestId('a b'), null)
    assert.equal(acceptableRequestId('a"b'), null)
    assert.equal(acceptableRequestId('a\nb'), null)
    assert.equal(acceptableRequestId(undefined), null)
    assert.equal(acceptableRequestId(['a', 'b']), null)
  })
})
