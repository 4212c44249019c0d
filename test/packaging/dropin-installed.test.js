'use strict'

// SVR.JS 3.x code in the installed layout (install.sh into a staging tree):
// the server root is etc/svr, svr's code and packages are in usr/lib/svr,
// and the service user may write only etc/svr/temp there.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { packLegacyMod } = require('../helpers/mods')
const { requireRoot, requireTools } = require('../helpers/tools')
const { EXAMPLE_SCRIPT, CONFIG_MOD } = require('../helpers/svrjs-code')

const INSTALL = path.join(__dirname, '..', '..', 'packaging', 'install.sh')

function run (file, args, options = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 120000, ...options }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr })
    })
  })
}

describe('SVR.JS 3.x code in the installed layout', () => {
  const user = `svrd${process.pid}`
  let dest = null
  let uid = null

  before(async () => {
    if (process.getuid() !== 0) return
    dest = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-dropin-'))
    // The service user must be able to reach the staged tree.
    await fs.chmod(dest, 0o755)
    const installed = await run(INSTALL, ['--user', user], { env: { ...process.env, DESTDIR: dest } })
    assert.equal(installed.code, 0, installed.stderr)
    uid = Number((await run('id', ['-u', user])).stdout)
  })

  after(async () => {
    if (dest === null) return
    await run('userdel', [user])
    await fs.rm(dest, { recursive: true, force: true })
  })

  // The staged config, pointing into the staging tree, with the mod in place.
  async function stage (settings) {
    const etc = path.join(dest, 'etc/svr')
    const config = JSON.parse(await fs.readFile(path.join(etc, 'config.json.dist'), 'utf8'))
    Object.assign(config, {
      port: '127.0.0.1:0',
      wwwroot: path.join(dest, 'var/www/svr'),
      logDirectory: path.join(dest, 'var/log/svr'),
      stateDirectory: path.join(dest, 'var/lib/svr'),
      workers: 1
    })
    await fs.writeFile(path.join(etc, 'config.json'), JSON.stringify(config, null, 2))
    await fs.writeFile(path.join(etc, 'serverSideScript.js'), EXAMPLE_SCRIPT)
    await fs.rm(path.join(etc, 'mods'), { recursive: true, force: true })
    await fs.mkdir(path.join(etc, 'mods'), { mode: 0o750 })
    await packLegacyMod(path.join(etc, 'mods'), '00-x.tar.gz', CONFIG_MOD, { name: 'X', version: '1.0.0' })
    const settingsFile = path.join(etc, 'x-config.json')
    await fs.rm(settingsFile, { force: true })
    if (settings !== undefined) await fs.writeFile(settingsFile, JSON.stringify(settings))
    // Readable by the service's group, as install.sh leaves /etc/svr.
    await run('chgrp', ['-R', user, etc])
    await run('chmod', ['-R', 'g+rX', etc])
    await fs.chown(path.join(etc, 'temp'), uid, uid)
    return path.join(etc, 'config.json')
  }

  function check (t) {
    return requireRoot(t) && requireTools(t, 'setpriv')
  }

  it('installs the server root\'s temp/, owned by the service user, private', async (t) => {
    if (!check(t)) return
    const stat = await fs.stat(path.join(dest, 'etc/svr/temp'))
    assert.equal(stat.isDirectory(), true)
    assert.equal(stat.uid, uid)
    assert.equal(stat.mode & 0o777, 0o700)
  })

  it('as the service user: the mod reads its settings beside config.json, the script counts in temp/', async (t) => {
    if (!check(t)) return
    const configFile = await stage({ upstream: 'http://127.0.0.1:1' })
    const svr = await startSvr(t, configFile, { svr: path.join(dest, 'usr/lib/svr/svr.js'), user })
    const settings = await request(svr.port, '/x-settings')
    assert.equal(settings.status, 200, settings.body)
    // mime-types comes from usr/lib/svr/node_modules: nothing above etc/svr has it.
    assert.deepEqual(JSON.parse(settings.body), { settings: { upstream: 'http://127.0.0.1:1' }, mime: 'text/css' })
    assert.equal((await request(svr.port, '/hello.svr')).body, 'Hello World! This page was visited 0 times.')
    assert.equal((await request(svr.port, '/hello.svr')).body, 'Hello World! This page was visited 1 times.')
    const counter = path.join(dest, 'etc/svr/temp/requestCounter')
    assert.equal(await fs.readFile(counter, 'utf8'), '1')
    assert.equal((await fs.stat(counter)).uid, uid)
    svr.signal('SIGTERM')
    assert.deepEqual(await svr.exited, { code: 0, signal: null })
    assert.deepEqual(await fs.readdir(path.join(dest, 'etc/svr/temp')), ['requestCounter'], 'the unpacked mod is gone, the counter stays')
  })

  it('staged as root: a mod without its settings file creates it beside config.json and nowhere else', async (t) => {
    if (!check(t)) return
    const configFile = await stage(undefined)
    const svr = await startSvr(t, configFile, { svr: path.join(dest, 'usr/lib/svr/svr.js') })
    assert.deepEqual(JSON.parse((await request(svr.port, '/x-settings')).body), { settings: {}, mime: 'text/css' })
    const found = await run('find', [dest, '-name', 'x-config.json'])
    assert.equal(found.stdout, path.join(dest, 'etc/svr/x-config.json') + '\n')
  })

  it('as the service user: a mod that must create its settings file in the read-only server root stops the start, naming it', async (t) => {
    if (!check(t)) return
    const configFile = await stage(undefined)
    const result = await runSvr(['--config', configFile], { svr: path.join(dest, 'usr/lib/svr/svr.js'), user, timeout: 20000 })
    assert.equal(result.code, 1)
    const mod = path.join(dest, 'etc/svr/mods/00-x.tar.gz')
    const line = result.stderr.split('\n').find((text) => text.includes('failed to load'))
    assert.ok(line.includes('mod ' + mod + ' failed to load: '), result.stderr)
    assert.match(line, /00-x\.tar\.gz\/index\.js:5:\d+: Error: EACCES: permission denied, open '\S+\/\.\.\/\.\.\/\.\.\/x-config\.json'$/)
    await assert.rejects(fs.access(path.join(dest, 'etc/svr/x-config.json')))
  })
})
