'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { algorithmOf, derive, randomSalt, createUserRecord } = require('../../lib/auth/hash')

const PASSWORD = 'pässword 1'
const SALT = 'Zt7qXgQ0k2bL'

// Known answers computed here with node:crypto's one-shot functions and the
// parameters of SVR.JS 3.x records and its svrpasswd tool.
function expected (algorithm, password, salt) {
  if (algorithm === 'sha256') return crypto.createHash('sha256').update(password + salt).digest('hex')
  if (algorithm === 'pbkdf2') return crypto.pbkdf2Sync(password, salt, 36250, 64, 'sha512').toString('hex')
  return crypto.scryptSync(password, salt, 64, { N: 16384, r: 8, p: 1 }).toString('hex')
}

describe('auth hash', () => {
  for (const algorithm of ['sha256', 'pbkdf2', 'scrypt']) {
    it('should derive the SVR.JS ' + algorithm + ' key', async () => {
      const key = await derive(algorithm, PASSWORD, SALT)
      assert.equal(key.toString('hex'), expected(algorithm, PASSWORD, SALT))
      assert.equal(key.length, algorithm === 'sha256' ? 32 : 64)
    })
  }

  it('should read the algorithm from the record flags, scrypt winning as in SVR.JS', () => {
    assert.equal(algorithmOf({}), 'sha256')
    assert.equal(algorithmOf({ pbkdf2: true }), 'pbkdf2')
    assert.equal(algorithmOf({ scrypt: true }), 'scrypt')
    assert.equal(algorithmOf({ scrypt: true, pbkdf2: true }), 'scrypt')
    assert.equal(algorithmOf({ scrypt: false, pbkdf2: false }), 'sha256')
  })

  it('should make 63-character alphanumeric salts that differ', () => {
    const a = randomSalt()
    const b = randomSalt()
    assert.match(a, /^[0-9A-Za-z]{63}$/)
    assert.match(b, /^[0-9A-Za-z]{63}$/)
    assert.notEqual(a, b)
  })

  it('should write records that verify with the same derivation', async () => {
    for (const algorithm of ['sha256', 'pbkdf2', 'scrypt']) {
      const record = await createUserRecord('alice', PASSWORD, algorithm)
      assert.equal(record.name, 'alice')
      assert.equal(record.pass, expected(algorithm, PASSWORD, record.salt))
      assert.equal(algorithmOf(record), algorithm)
      assert.equal(record.__svrpasswd_l2, true)
    }
  })
})
