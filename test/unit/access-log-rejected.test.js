'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { AccessLog } = require('../../lib/logging/access-log')
const { formatCombined } = require('../../lib/logging/format')
const { parseCombined } = require('../helpers/access-log')

describe('AccessLog#logRejected', () => {
  const lines = []
  const observed = []
  const accessLog = new AccessLog('1')
  accessLog.configure({ sink: { write: (line) => lines.push(line) }, format: formatCombined, observer: (e) => observed.push(e.status) })
  const socket = { remoteAddress: '::ffff:198.51.100.4' }

  it('should log a request line the parser refused, split into its parts', () => {
    accessLog.logRejected(socket, 431, 'GET /huge HTTP/1.1', 142)
    const fields = parseCombined(lines.pop().trimEnd())
    assert.equal(fields.address, '198.51.100.4')
    assert.equal(fields.request, 'GET /huge HTTP/1.1')
    assert.equal(fields.status, 431)
    assert.equal(fields.bytes, 142)
    assert.match(fields.requestId, /^[0-9a-f-]{36}$/)
  })

  it('should keep a line that is not a request line whole and escaped', () => {
    accessLog.logRejected(socket, 400, '\x16\x03\x01\x00\xa5 "x', 142)
    const line = lines.pop()
    assert.match(line, /\] "\\x16\\x03\\x01\\x00\\xA5 \\x22x" 400 142 "-" "-" "/)
    assert.notEqual(parseCombined(line.trimEnd()), null)
    accessLog.logRejected(socket, 408, null, 0)
    assert.match(lines.pop(), /\] "-" 408 - "-" "-" "/)
  })

  it('should count the request in the metrics', () => {
    assert.deepEqual(observed, [431, 400, 408])
  })
})
