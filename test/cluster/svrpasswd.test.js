'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')
const { loadConfig } = require('../../lib/primary/options')

const SVRPASSWD = path.resolve(__dirname, '..', '..', 'bin', 'svrpasswd.js')

/**
 * @param {string[]} args
 * @param {string} [input] written to stdin, which is then closed
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
function svrpasswd (args, input = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVRPASSWD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000)
    child.on('error', reject)
    // svrpasswd may refuse (an existing user, bad usage) and exit before it
    // reads its input: the write then fails with EPIPE, which says nothing.
    child.stdin.on('error', () => {})
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })
}

function basic (name, password) {
  return { authorization: 'Basic ' + Buffer.from(name + ':' + password).toString('base64') }
}

describe('svrpasswd', () => {
  const scope = createScope()
  let site
  let svr
  let original

  before(async () => {
    site = await makeSite(scope, {
      workers: 1,
      customHeaders: { 'X-Kept': 'yes' },
      nonStandardCodes: [{ scode: 401, url: '/secret.txt' }]
    }, { 'secret.txt': 'the secret' })
    await fs.chmod(site.configFile, 0o640)
    original = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  })
  after(() => scope.cleanup())

  function run (args, input) {
    return svrpasswd(['--config', site.configFile, ...args], input)
  }

  async function get (name, password) {
    return (await request(svr.port, '/secret.txt', { headers: basic(name, password) })).status
  }

  it('should add a scrypt user from stdin, keeping the rest of the file, its mode and validity', async () => {
    const added = await run(['add', 'alice', '--password-stdin'], 'first pw\nignored line\n')
    assert.equal(added.code, 0, added.stderr)
    assert.match(added.stdout, /added user "alice" \(scrypt\)/)
    assert.match(added.stdout, /systemctl reload svr/)
    const written = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    assert.deepEqual(Object.keys(written), [...Object.keys(original), 'users'])
    assert.deepEqual({ ...written, users: undefined }, { ...original, users: undefined })
    assert.equal(written.users.length, 1)
    assert.equal(written.users[0].scrypt, true)
    assert.match(written.users[0].salt, /^[0-9A-Za-z]{63}$/)
    assert.equal((await fs.stat(site.configFile)).mode & 0o777, 0o640)
    assert.deepEqual((await fs.readdir(site.dir)).sort(), ['config.json', 'webroot'])
    const config = await loadConfig(site.configFile)
    assert.equal(config.users[0].name, 'alice')
  })

  it('should give the server a user that logs in with that password only', async () => {
    svr = await startSvr(scope, site.configFile)
    assert.equal(await get('alice', 'first pw'), 200)
    assert.equal(await get('alice', 'ignored line'), 401)
  })

  it('should change the password, with the algorithm asked for, and the reload apply it', async () => {
    const changed = await run(['change', 'alice', '--algorithm', 'pbkdf2', '--password-stdin'], 'second pw\r\n')
    assert.equal(changed.code, 0, changed.stderr)
    const config = await loadConfig(site.configFile)
    assert.equal(config.users.length, 1)
    assert.equal(config.users[0].pbkdf2, true)
    const from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, from)
    assert.equal(await get('alice', 'second pw'), 200)
    assert.equal(await get('alice', 'first pw'), 401)
  })

  it('should refuse an existing user on add and an unknown one on change or delete', async () => {
    const before = await fs.readFile(site.configFile, 'utf8')
    const again = await run(['add', 'alice', '--password-stdin'], 'x\n')
    assert.equal(again.code, 1)
    assert.match(again.stderr, /already exists/)
    for (const action of ['change', 'delete']) {
      const missing = await run([action, 'bob', '--password-stdin'].slice(0, action === 'delete' ? 2 : 3), 'x\n')
      assert.equal(missing.code, 1, action)
      assert.match(missing.stderr, /no user "bob"/)
    }
    assert.equal(await fs.readFile(site.configFile, 'utf8'), before)
  })

  it('should refuse an empty password and a missing terminal', async () => {
    const empty = await run(['add', 'bob', '--password-stdin'], '\n')
    assert.equal(empty.code, 1)
    assert.match(empty.stderr, /empty/)
    const noTty = await run(['add', 'bob'])
    assert.equal(noTty.code, 1)
    assert.match(noTty.stderr, /--password-stdin/)
  })

  it('should list and delete users', async () => {
    const added = await run(['add', 'bob', '--algorithm', 'sha256', '--password-stdin'], 'b\n')
    assert.equal(added.code, 0, added.stderr)
    const listed = await run(['list'])
    assert.equal(listed.stdout, 'alice\tpbkdf2\nbob\tsha256\n')
    const deleted = await run(['delete', 'alice'])
    assert.equal(deleted.code, 0, deleted.stderr)
    assert.equal((await run(['list'])).stdout, 'bob\tsha256\n')
    const config = await loadConfig(site.configFile)
    assert.deepEqual(config.users.map((user) => user.name), ['bob'])
  })

  it('should reject bad usage with exit code 2', async () => {
    for (const args of [[], ['frob', 'x'], ['add'], ['add', 'a:b'], ['list', 'x'], ['add', 'x', '--algorithm', 'md5'], ['add', 'x', '--nope'],
      ['delete', 'x', '--algorithm', 'sha256'], ['list', '--password-stdin'], ['add', 'x', 'y']]) {
      const result = await run(args)
      assert.equal(result.code, 2, args.join(' '))
      assert.match(result.stderr, /Usage: svrpasswd/)
    }
  })
})

describe('svrpasswd with a broken config file', () => {
  const scope = createScope()
  after(() => scope.cleanup())

  it('should fail without touching an invalid or missing file', async () => {
    const site = await makeSite(scope)
    await fs.writeFile(site.configFile, '{"port": 80,')
    const broken = await svrpasswd(['--config', site.configFile, 'add', 'x', '--password-stdin'], 'pw\n')
    assert.equal(broken.code, 1)
    assert.match(broken.stderr, /not valid JSON/)
    assert.equal(await fs.readFile(site.configFile, 'utf8'), '{"port": 80,')
    await fs.writeFile(site.configFile, '{"users": {}}')
    const notArray = await svrpasswd(['--config', site.configFile, 'list'])
    assert.equal(notArray.code, 1)
    assert.match(notArray.stderr, /"users" is not an array/)
    const missing = await svrpasswd(['--config', path.join(site.dir, 'nope.json'), 'list'])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /cannot read/)
  })
})
