'use strict'

// A request's duration costs two readings of the monotonic clock, taken
// only when something reads it: the metrics, or a log format with a field
// for it (AccessLog#wantsDuration).

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { AccessLog } = require('../../lib/logging/access-log')
const { createCombinedFormat, formatJson } = require('../../lib/logging/format')

const SINK = { write () {} }

function wants (changes) {
  const log = new AccessLog('1')
  log.configure(changes)
  return log.wantsDuration
}

describe('AccessLog#wantsDuration', () => {
  it('should be false for the combined format without metrics', () => {
    assert.equal(wants({ format: createCombinedFormat(), sink: SINK, observer: null }), false)
  })

  it('should be true for the JSON format', () => {
    assert.equal(wants({ format: formatJson, sink: SINK, observer: null }), true)
  })

  it('should be true with the metrics observing, whatever the format', () => {
    assert.equal(wants({ format: createCombinedFormat(), sink: SINK, observer () {} }), true)
    assert.equal(wants({ format: null, sink: null, observer () {} }), true)
  })

  it('should be true for a format that does not say', () => {
    assert.equal(wants({ format: (entry) => entry.method + '\n', sink: SINK, observer: null }), true)
  })

  it('should follow a reconfiguration', () => {
    const log = new AccessLog('1')
    log.configure({ format: createCombinedFormat(), sink: SINK, observer () {} })
    log.configure({ observer: null })
    assert.equal(log.wantsDuration, false)
  })

  it('should be false with nothing configured', () => {
    assert.equal(new AccessLog('1').wantsDuration, false)
  })
})
