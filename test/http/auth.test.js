'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

// SVR.JS 3.x `users` records (salted SHA-256, PBKDF2 or scrypt), computed here
// with node:crypto.
const USERS = [
  { name: 'alice', password: 'alice-pw', algorithm: 'sha256' },
  { name: 'bob', password: 'bob-pw', algorithm: 'pbkdf2' },
  { name: 'carol', password: 'cärol pw', algorithm: 'scrypt' }
].map(record)

function record ({ name, password, algorithm }) {
  const salt = crypto.randomBytes(24).toString('hex')
  if (algorithm === 'sha256') return { name, salt, pass: crypto.createHash('sha256').update(password + salt).digest('hex') }
  if (algorithm === 'pbkdf2') {
    return { name, salt, pbkdf2: true, pass: crypto.pbkdf2Sync(password, salt, 36250, 64, 'sha512').toString('hex') }
  }
  return { name, salt, scrypt: true, pass: crypto.scryptSync(password, salt, 64, { N: 16384, r: 8, p: 1 }).toString('hex') }
}

function basic (name, password) {
  return 'Basic ' + Buffer.from(name + ':' + password).toString('base64')
}

const SCRIPT = `
if (href === '/private/who' || href === '/public/who') {
  disableEndElseCallbackExecute = true
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end('user=' + authUser)
} else if (href === '/pid') {
  disableEndElseCallbackExecute = true
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(String(process.pid))
}
`

async function startSite (scope, config, args) {
  const site = await makeSite(scope, { users: USERS, ...config }, {
    'index.html': 'index',
    'secret/file.txt': 'secret file',
    'team/index.html': 'team page'
  })
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
  return startSvr(scope, site.configFile, { args })
}

describe('Basic auth', () => {
  const scope = createScope()
  let port

  before(async () => {
    port = (await startSite(scope, {
      workers: 1,
      nonStandardCodes: [
        { scode: 401, regex: '/^\\/secret(?:$|[/?])/', realm: 'Members "only"', disableBruteProtection: true },
        { scode: 401, url: '/team/index.html', userList: ['bob'], disableBruteProtection: true },
        { scode: 401, regex: '/^\\/private\\//', disableBruteProtection: true }
      ]
    })).port
  })
  after(() => scope.cleanup())

  it('should challenge a request without credentials', async () => {
    const res = await request(port, '/secret/file.txt')
    assert.equal(res.status, 401)
    assert.equal(res.headers['www-authenticate'], 'Basic realm="Members \\"only\\"", charset="UTF-8"')
    assert.match(res.body, /401 Unauthorized/)
    const head = await request(port, '/secret/file.txt', { method: 'HEAD' })
    assert.equal(head.status, 401)
    assert.equal(head.body, '')
  })

  it('should let every kind of SVR.JS user in with the right password', async () => {
    for (const [name, password] of [['alice', 'alice-pw'], ['bob', 'bob-pw'], ['carol', 'cärol pw']]) {
      const res = await request(port, '/secret/file.txt', { headers: { authorization: basic(name, password) } })
      assert.equal(res.status, 200, name)
      assert.equal(res.body, 'secret file')
    }
  })

  it('should refuse a wrong password, an unknown user and a malformed header with 401', async () => {
    for (const authorization of [basic('alice', 'bob-pw'), basic('carol', 'carol pw'), basic('mallory', 'x'), 'Basic !!!', 'Bearer abc']) {
      const res = await request(port, '/secret/file.txt', { headers: { authorization } })
      assert.equal(res.status, 401, authorization)
      assert.match(res.headers['www-authenticate'], /^Basic realm=/)
    }
  })

  it('should accept only the userList on an entry that has one', async () => {
    const alice = await request(port, '/team/index.html', { headers: { authorization: basic('alice', 'alice-pw') } })
    assert.equal(alice.status, 401)
    assert.equal(alice.headers['www-authenticate'], 'Basic realm="Restricted area", charset="UTF-8"')
    const bob = await request(port, '/team/index.html', { headers: { authorization: basic('bob', 'bob-pw') } })
    assert.equal(bob.status, 200)
    assert.equal(bob.body, 'team page')
  })

  it('should leave other paths open', async () => {
    const res = await request(port, '/index.html')
    assert.equal(res.status, 200)
    assert.equal(res.headers['www-authenticate'], undefined)
  })

  it('should give the script the authenticated user as authUser', async () => {
    const who = await request(port, '/private/who', { headers: { authorization: basic('carol', 'cärol pw') } })
    assert.equal(who.status, 200)
    assert.equal(who.body, 'user=carol')
    const anonymous = await request(port, '/public/who')
    assert.equal(anonymous.body, 'user=null')
  })
})

describe('failed-login throttle across workers', () => {
  const scope = createScope()
  let svr
  let port

  before(async () => {
    svr = await startSite(scope, {
      workers: 2,
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1'],
      nonStandardCodes: [{ scode: 401, regex: '/^\\/secret/' }]
    })
    port = svr.port
  })
  after(() => scope.cleanup())

  function from (address, authorization) {
    const headers = { 'x-forwarded-for': address }
    if (authorization) headers.authorization = authorization
    return request(port, '/secret/file.txt', { headers, agent: false })
  }

  it('should spread new connections over both workers', async () => {
    // The kernel hands each new connection to whichever worker accepts
    // first: one connection at a time, a worker the machine's load keeps
    // waiting took none of 100 in a CI run. A few at once, it takes some.
    const pids = new Set()
    for (let i = 0; i < 25 && pids.size < 2; i++) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => request(port, '/pid', { agent: false })))
      for (const answer of answers) pids.add(answer.body)
    }
    assert.equal(pids.size, 2)
  })

  it('should lock a user from the flooding address only, for every worker', async () => {
    const statuses = []
    for (let i = 0; i < 6; i++) statuses.push((await from('203.0.113.5', basic('alice', 'guess' + i))).status)
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429])
    const locked = await from('203.0.113.5', basic('alice', 'alice-pw'))
    assert.equal(locked.status, 429)
    const retryAfter = Number(locked.headers['retry-after'])
    assert.ok(retryAfter > 0 && retryAfter <= 300, 'Retry-After ' + locked.headers['retry-after'])
    assert.equal(locked.headers['www-authenticate'], undefined)
    // The same user from elsewhere, and another user from the flooding address.
    assert.equal((await from('198.51.100.7', basic('alice', 'alice-pw'))).status, 200)
    assert.equal((await from('203.0.113.5', basic('bob', 'bob-pw'))).status, 200)
    await svr.waitFor(/too many failed logins: user "alice" from 203\.0\.113\.5 locked for 300 s/)
  })

  it('should lock an address that tries many names, even for right credentials and without any', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await from('203.0.113.9', basic('name' + i, 'x'))).status, 401)
    assert.equal((await from('203.0.113.9', basic('carol', 'cärol pw'))).status, 429)
    const bare = await from('203.0.113.9')
    assert.equal(bare.status, 429)
    assert.match(bare.headers['retry-after'], /^\d+$/)
    assert.equal((await from('203.0.113.10', basic('carol', 'cärol pw'))).status, 200)
  })

  it('should let no more than the limit of a parallel burst of guesses through', async () => {
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => from('203.0.113.77', basic('dave', 'guess' + i))))
    const statuses = burst.map((res) => res.status).sort()
    assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(15).fill(429)])
  })

  it('should refuse the right password too once a parallel burst has reached the limit', async () => {
    // A burst of guesses in parallel: five are judged, the rest refused,
    // whatever order the connections reach the throttle in; after it, the
    // right password is refused like any guess. (Sent inside the burst, it
    // may be among the five judged first, as the connections are scheduled.)
    const burst = await Promise.all(Array.from({ length: 19 }, (_, i) => from('203.0.113.99', basic('carol', 'guess' + i))))
    assert.deepEqual(burst.map((res) => res.status).sort(), [...Array(5).fill(401), ...Array(14).fill(429)])
    assert.equal((await from('203.0.113.99', basic('carol', 'cärol pw'))).status, 429)
  })

  it('should let the parallel requests of a browser with the right password through', async () => {
    const burst = await Promise.all(Array.from({ length: 20 }, () => from('203.0.113.88', basic('bob', 'bob-pw'))))
    assert.deepEqual(burst.map((res) => res.status), Array(20).fill(200))
  })

  it('should keep locks across a reload, which replaces the workers', async () => {
    const from0 = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, from0)
    assert.equal((await from('203.0.113.5', basic('alice', 'alice-pw'))).status, 429)
    assert.equal((await from('198.51.100.7', basic('alice', 'alice-pw'))).status, 200)
  })

  it('should clear the user counter on a successful login', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await from('192.0.2.44', basic('bob', 'no'))).status, 401)
    assert.equal((await from('192.0.2.44', basic('bob', 'bob-pw'))).status, 200)
    for (let i = 0; i < 4; i++) assert.equal((await from('192.0.2.44', basic('bob', 'no'))).status, 401)
    assert.equal((await from('192.0.2.44', basic('bob', 'bob-pw'))).status, 200)
  })
})

describe('failed-login throttle behind an untrusted peer', () => {
  const scope = createScope()
  let port

  before(async () => {
    port = (await startSite(scope, {
      workers: 1,
      enableIPSpoofing: true,
      trustedProxies: ['10.0.0.1'],
      nonStandardCodes: [{ scode: 401, regex: '/^\\/secret/' }]
    })).port
  })
  after(() => scope.cleanup())

  it('should lock the real peer however the X-Forwarded-For rotates (SVR.JS 3.x trusted the leftmost entry from any peer)', async () => {
    const statuses = []
    for (let i = 0; i < 12; i++) {
      const res = await request(port, '/secret/file.txt', {
        headers: { 'x-forwarded-for': '198.51.100.' + (i + 1), authorization: basic('alice', 'guess' + i) }
      })
      statuses.push(res.status)
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429])
  })
})

describe('failed-login throttle in a single process', () => {
  const scope = createScope()
  let port

  before(async () => {
    port = (await startSite(scope, { nonStandardCodes: [{ scode: 401, url: '/secret/file.txt' }] }, ['--single-threaded'])).port
  })
  after(() => scope.cleanup())

  it('should lock after the same number of failures', async () => {
    const statuses = []
    for (let i = 0; i < 6; i++) {
      statuses.push((await request(port, '/secret/file.txt', { headers: { authorization: basic('bob', 'x' + i) } })).status)
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429])
    assert.equal((await request(port, '/secret/file.txt', { headers: { authorization: basic('alice', 'alice-pw') } })).status, 200)
  })
})
