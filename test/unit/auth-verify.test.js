'use strict'

const { describe, it, mock } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { createVerifier } = require('../../lib/auth/verify')
const { derive } = require('../../lib/auth/hash')

function sha256User (name, password, salt = 'salt-' + name) {
  return { name, salt, pass: crypto.createHash('sha256').update(password + salt).digest('hex') }
}

function pbkdf2User (name, password, salt = 'salt-' + name) {
  return { name, salt, pbkdf2: true, pass: crypto.pbkdf2Sync(password, salt, 36250, 64, 'sha512').toString('hex') }
}

describe('createVerifier', () => {
  it('should accept the right password and refuse a wrong one', async () => {
    const verifier = createVerifier([sha256User('alice', 'right'), pbkdf2User('bob', 'other')])
    assert.equal(await verifier.verify('alice', 'right', null), 'alice')
    assert.equal(await verifier.verify('alice', 'wrong', null), null)
    assert.equal(await verifier.verify('bob', 'other', null), 'bob')
    assert.equal(await verifier.verify('bob', 'right', null), null)
  })

  it('should check an unknown name against the dummy record', async () => {
    const spy = mock.fn(derive)
    const verifier = createVerifier([sha256User('alice', 'right'), pbkdf2User('bob', 'b'), pbkdf2User('carol', 'c')], { derive: spy })
    assert.equal(await verifier.verify('mallory', 'right', null), null)
    assert.equal(spy.mock.callCount(), 1)
    const [algorithm, password, salt] = spy.mock.calls[0].arguments
    // pbkdf2 is the most common algorithm among the users.
    assert.equal(algorithm, 'pbkdf2')
    assert.equal(verifier.dummy.algorithm, 'pbkdf2')
    assert.equal(password, 'right')
    assert.equal(salt, verifier.dummy.salt)
    assert.match(salt, /^[0-9A-Za-z]{63}$/)
  })

  it('should take the dummy path for a real user outside the userList', async () => {
    const spy = mock.fn(derive)
    const verifier = createVerifier([sha256User('alice', 'right'), sha256User('bob', 'b')], { derive: spy })
    assert.equal(await verifier.verify('alice', 'right', new Set(['bob'])), null)
    assert.equal(spy.mock.calls[0].arguments[2], verifier.dummy.salt)
    assert.equal(await verifier.verify('bob', 'b', new Set(['bob'])), 'bob')
    assert.equal(spy.mock.calls[1].arguments[2], 'salt-bob')
  })

  it('should never accept the dummy, whatever the password', async () => {
    const verifier = createVerifier([], { derive: async () => Buffer.alloc(64) })
    verifier.dummy.hash = Buffer.alloc(64)
    assert.equal(await verifier.verify('nobody', '', null), null)
  })

  it('should prefer the slowest algorithm when counts tie, scrypt without users', () => {
    assert.equal(createVerifier([]).dummy.algorithm, 'scrypt')
    assert.equal(createVerifier([sha256User('a', 'x'), pbkdf2User('b', 'y')]).dummy.algorithm, 'pbkdf2')
    assert.equal(createVerifier([sha256User('a', 'x')]).dummy.algorithm, 'sha256')
  })

  it('should not derive again for a recently verified pair', async () => {
    const spy = mock.fn(derive)
    const verifier = createVerifier([pbkdf2User('bob', 'b')], { derive: spy })
    assert.equal(await verifier.verify('bob', 'b', null), 'bob')
    assert.equal(await verifier.verify('bob', 'b', null), 'bob')
    assert.equal(spy.mock.callCount(), 1)
    assert.equal(await verifier.verify('bob', 'x', null), null)
    assert.equal(spy.mock.callCount(), 2)
  })

  it('should run one derivation for concurrent checks of the same credentials', async () => {
    let release
    const gate = new Promise((resolve) => { release = resolve })
    const spy = mock.fn(async (...args) => {
      await gate
      return derive(...args)
    })
    const verifier = createVerifier([sha256User('alice', 'right')], { derive: spy })
    assert.equal(verifier.knows('alice', 'right', null), false)
    const right = [verifier.verify('alice', 'right', null), verifier.verify('alice', 'right', null)]
    const wrong = [verifier.verify('alice', 'wrong', null), verifier.verify('alice', 'wrong', null)]
    assert.equal(verifier.knows('alice', 'right', null), true)
    assert.equal(verifier.knows('alice', 'wrong', null), true)
    release()
    assert.deepEqual(await Promise.all(right), ['alice', 'alice'])
    assert.deepEqual(await Promise.all(wrong), [null, null])
    assert.equal(spy.mock.callCount(), 2)
    assert.equal(verifier.knows('alice', 'right', null), true)
    assert.equal(verifier.knows('alice', 'wrong', null), false)
  })

  it('should never know unknown names or names outside the userList', async () => {
    const verifier = createVerifier([sha256User('alice', 'right')])
    assert.equal(await verifier.verify('alice', 'right', null), 'alice')
    assert.equal(verifier.knows('alice', 'right', null), true)
    assert.equal(verifier.knows('alice', 'right', new Set(['bob'])), false)
    assert.equal(verifier.knows('mallory', 'right', null), false)
  })

  it('should use the first record of a duplicated name and never match a truncated hash', async () => {
    const first = sha256User('alice', 'one')
    const second = sha256User('alice', 'two')
    const truncated = { ...sha256User('carol', 'c'), name: 'carol' }
    truncated.pass = truncated.pass.slice(0, 40)
    const verifier = createVerifier([first, second, truncated])
    assert.equal(await verifier.verify('alice', 'one', null), 'alice')
    assert.equal(await verifier.verify('alice', 'two', null), null)
    assert.equal(await verifier.verify('carol', 'c', null), null)
  })
})
