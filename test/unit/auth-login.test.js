'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { createLoginJudge } = require('../../lib/auth/login')
const { compileAuthRules } = require('../../lib/auth/rules')
const { inProcessRuntime } = require('../helpers/in-process-runtime')

const SALT = 'pepper'
const USERS = [{ name: 'alice', salt: SALT, pass: crypto.createHash('sha256').update('right' + SALT).digest('hex') }]
const [THROTTLED, OPEN] = compileAuthRules([{ scode: 401, url: '/a' }, { scode: 401, url: '/b', disableBruteProtection: true }])
const log = { warn () {} }
// Each test its own coordinator, so locks of one do not reach the next.
const runtime = () => inProcessRuntime(log).runtime

function creds (password, name = 'alice') {
  return { name, password }
}

describe('createLoginJudge', () => {
  it('should accept the right password and refuse others', async () => {
    const judge = createLoginJudge(USERS, true, runtime())
    assert.deepEqual(await judge(THROTTLED, '192.0.2.1', creds('right')), { wait: 0, user: 'alice' })
    assert.deepEqual(await judge(THROTTLED, '192.0.2.1', creds('wrong')), { wait: 0, user: null })
    assert.deepEqual(await judge(THROTTLED, '192.0.2.1', null), { wait: 0, user: null })
  })

  it('should count concurrent identical guesses from one client once', async () => {
    const judge = createLoginJudge(USERS, true, runtime())
    const same = await Promise.all(Array.from({ length: 10 }, () => judge(THROTTLED, '192.0.2.2', creds('guess'))))
    assert.ok(same.every((outcome) => outcome.wait === 0 && outcome.user === null))
    const more = []
    for (let i = 0; i < 5; i++) more.push((await judge(THROTTLED, '192.0.2.2', creds('guess' + i))).wait)
    assert.deepEqual(more.map((wait) => wait > 0), [false, false, false, false, true])
  })

  it('should answer a locked client with the wait, with or without credentials', async () => {
    const judge = createLoginJudge(USERS, true, runtime())
    for (let i = 0; i < 11; i++) await judge(THROTTLED, '192.0.2.3', creds('x', 'user' + i))
    assert.ok((await judge(THROTTLED, '192.0.2.3', creds('right'))).wait > 0)
    assert.ok((await judge(THROTTLED, '192.0.2.3', null)).wait > 0)
  })

  it('should never throttle a rule with disableBruteProtection', async () => {
    const judge = createLoginJudge(USERS, false, runtime())
    for (let i = 0; i < 15; i++) assert.equal((await judge(OPEN, '192.0.2.4', creds('x' + i))).wait, 0)
    assert.deepEqual(await judge(OPEN, '192.0.2.4', creds('right')), { wait: 0, user: 'alice' })
  })
})
