'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { CODES, svrError, SvrError } = require('../../lib/errors')

const DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8')

describe('error codes', () => {
  it('should build errors carrying their code and formatted message', () => {
    const cause = new Error('inner')
    const err = svrError('SVR_ERR_LISTEN', ['127.0.0.1:80', 'busy'], { cause })
    assert.ok(err instanceof SvrError)
    assert.equal(err.code, 'SVR_ERR_LISTEN')
    assert.equal(err.message, 'cannot listen on 127.0.0.1:80: busy')
    assert.equal(err.cause, cause)
  })

  it('should refuse an unknown code', () => {
    assert.throws(() => svrError('SVR_ERR_NOPE'), TypeError)
  })

  it('should keep the table in alphabetical order', () => {
    const keys = Object.keys(CODES)
    assert.deepEqual(keys, [...keys].sort())
  })

  it('should document every code in docs/errors.md and nothing else', () => {
    const documented = [...DOC.matchAll(/^\| `(SVR_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1])
    assert.deepEqual(documented, Object.keys(CODES))
  })
})
