'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { formatLine } = require('../../lib/log')

describe('formatLine(level, who, message, tty, stamp)', () => {
  it('should write one plain line without colour codes when not a terminal', () => {
    const line = formatLine('error', 'worker 1', 'first\nsecond', false, false)
    assert.equal(line, 'error [worker 1] first\\nsecond\n')
  })

  it('should colour the level on a terminal', () => {
    const ESC = '\u001b'
    assert.equal(formatLine('warn', 'primary', 'x', true, false), `${ESC}[33mwarn${ESC}[0m [primary] x\n`)
  })

  it('should start with an ISO timestamp unless journald stamps the line', () => {
    assert.match(formatLine('info', 'primary', 'x', false, true), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info \[primary\] x\n$/)
  })
})
