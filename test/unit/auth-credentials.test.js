'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { parseBasicCredentials } = require('../../lib/auth/credentials')

function basic (text, scheme = 'Basic') {
  return scheme + ' ' + Buffer.from(text, 'utf8').toString('base64')
}

describe('parseBasicCredentials', () => {
  it('should split name and password at the first colon', () => {
    assert.deepEqual(parseBasicCredentials(basic('alice:pa:ss')), { name: 'alice', password: 'pa:ss' })
    assert.deepEqual(parseBasicCredentials(basic(':')), { name: '', password: '' })
  })

  it('should accept the scheme in any case and decode UTF-8', () => {
    assert.deepEqual(parseBasicCredentials(basic('jörg:pässwörd', 'bAsIc')), { name: 'jörg', password: 'pässwörd' })
  })

  it('should accept base64 without padding', () => {
    const token = Buffer.from('ab:c').toString('base64').replace(/=+$/, '')
    assert.deepEqual(parseBasicCredentials('Basic ' + token), { name: 'ab', password: 'c' })
  })

  it('should refuse absent, foreign and malformed credentials', () => {
    assert.equal(parseBasicCredentials(undefined), null)
    assert.equal(parseBasicCredentials(''), null)
    assert.equal(parseBasicCredentials('Basic'), null)
    assert.equal(parseBasicCredentials(basic('alice:x', 'Bearer')), null)
    assert.equal(parseBasicCredentials(basic('alice:x', 'Basicx')), null)
    assert.equal(parseBasicCredentials(basic('no colon')), null)
    assert.equal(parseBasicCredentials('Basic ***'), null)
    assert.equal(parseBasicCredentials('Basic YWxpY2U6eA==='), null)
  })
})
