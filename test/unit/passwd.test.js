'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { Readable } = require('node:stream')
const { readHidden, readFirstLine } = require('../../lib/passwd/password')
const { nameProblem, addUser, changeUser, deleteUser, listUsers } = require('../../lib/passwd/users')

class FakeTerminal extends EventEmitter {
  constructor () {
    super()
    this.isTTY = true
    this.raw = []
  }

  setRawMode (on) { this.raw.push(on) }
  setEncoding () {}
  resume () {}
  pause () {}
}

function sink () {
  return { text: '', write (chunk) { this.text += chunk } }
}

describe('readHidden', () => {
  it('should read a line in raw mode without echoing it, handling backspace', async () => {
    const input = new FakeTerminal()
    const output = sink()
    const result = readHidden(input, output, 'Password: ')
    input.emit('data', 'sekz')
    input.emit('data', '\u007fret🔑x\b')
    input.emit('data', '\rafter')
    assert.equal(await result, 'sekret🔑')
    assert.deepEqual(input.raw, [true, false])
    assert.equal(output.text, 'Password: \n')
    assert.equal(input.listenerCount('data'), 0)
  })

  it('should abort on Ctrl-C and on Ctrl-D at an empty line', async () => {
    for (const key of ['abc\u0003', '\u0004']) {
      const input = new FakeTerminal()
      const result = readHidden(input, sink(), '')
      input.emit('data', key)
      await assert.rejects(result, { code: 'ABORTED' })
      assert.deepEqual(input.raw, [true, false])
    }
  })
})

describe('readFirstLine', () => {
  it('should return the first line without its line end', async () => {
    assert.equal(await readFirstLine(Readable.from(['pa', 'ss\r\nnext\n'])), 'pass')
    assert.equal(await readFirstLine(Readable.from(['no newline'])), 'no newline')
    assert.equal(await readFirstLine(Readable.from([])), '')
  })
})

describe('users edits', () => {
  const users = [{ name: 'a', pass: '00', salt: 's' }, { name: 'b', pass: '11', salt: 's', scrypt: true }, { name: 'a', pass: '22', salt: 's' }]

  it('should replace the first record of a name and drop later duplicates', () => {
    const record = { name: 'a', pass: 'ff', salt: 't', pbkdf2: true }
    assert.deepEqual(changeUser(users, record), [record, users[1]])
    assert.throws(() => changeUser(users, { name: 'z' }), /no user "z"/)
  })

  it('should add only new names and delete every record of a name', () => {
    assert.throws(() => addUser(users, { name: 'b' }), /already exists/)
    assert.equal(addUser(users, { name: 'c' }).length, 4)
    assert.deepEqual(deleteUser(users, 'a'), [users[1]])
    assert.throws(() => deleteUser(users, 'z'), /no user/)
    assert.equal(users.length, 3)
  })

  it('should list names with their algorithms and refuse unusable names', () => {
    assert.deepEqual(listUsers(users), ['a\tsha256', 'b\tscrypt', 'a\tsha256'])
    assert.equal(nameProblem('alice'), null)
    assert.notEqual(nameProblem(''), null)
    assert.notEqual(nameProblem('a:b'), null)
    assert.notEqual(nameProblem('a\nb'), null)
  })
})
