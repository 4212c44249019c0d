'use strict'

// The service files are tested the way a sysadmin uses them: shellcheck and
// systemd-analyze on the files, then install.sh into a staging tree as root
// and the init.d script driving that tree for real with start-stop-daemon.
// Root and the tools are there in CI (.ci/run installs them); elsewhere the
// tests that need them skip with the reason.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { request } = require('../helpers/http')
const { missingTools, requireRoot, requireTools } = require('../helpers/tools')
const { loadConfig } = require('../../lib/primary/options')

const ROOT = path.join(__dirname, '..', '..')
const PACKAGING = path.join(ROOT, 'packaging')
const UNIT = path.join(PACKAGING, 'systemd', 'svr.service')
const INIT_SCRIPT = path.join(PACKAGING, 'init.d', 'svr')

function run (file, args, options = {}) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 120000, ...options }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr })
    })
  })
}

// Root and every tool, or a skip (outside CI) or a failure (under CI).
function requireRootAndTools (t, ...names) {
  return requireTools(t, ...names) && requireRoot(t)
}

describe('service files', () => {
  it('shellcheck finds nothing in the init.d script and the installers', async (t) => {
    if (!requireTools(t, 'shellcheck')) return
    const sh = await run('shellcheck', ['-s', 'sh', '-S', 'warning', INIT_SCRIPT])
    assert.equal(sh.code, 0, sh.stdout + sh.stderr)
    const bash = await run('shellcheck', ['-S', 'warning', path.join(PACKAGING, 'install.sh'), path.join(PACKAGING, 'uninstall.sh')])
    assert.equal(bash.code, 0, bash.stdout + bash.stderr)
  })

  it('the init.d script has a complete LSB header', async () => {
    const text = await fs.readFile(INIT_SCRIPT, 'utf8')
    const header = text.match(/### BEGIN INIT INFO\n([\s\S]*?)### END INIT INFO/)
    assert.ok(header, 'LSB header block')
    for (const field of ['Provides', 'Required-Start', 'Required-Stop', 'Default-Start', 'Default-Stop', 'Short-Description', 'Description']) {
      assert.match(header[1], new RegExp(`^# ${field}:\\s+\\S`, 'm'), field)
    }
  })

  it('systemd-analyze verify prints nothing and the exposure is the one packaging/README.md gives, at most 2.0', async (t) => {
    if (!requireTools(t, 'systemd-analyze')) return
    const verify = await run('systemd-analyze', ['verify', UNIT])
    assert.equal(verify.code, 0, verify.stderr)
    assert.equal((verify.stdout + verify.stderr).trim(), '')
    const security = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', UNIT])
    const exposure = security.stdout.match(/Overall exposure level for svr\.service: (\d+\.\d)/)
    assert.ok(exposure, security.stdout + security.stderr)
    assert.ok(Number(exposure[1]) <= 2.0, `exposure ${exposure[1]}`)
    const readme = await fs.readFile(path.join(PACKAGING, 'README.md'), 'utf8')
    assert.match(readme, new RegExp(`exposure[^\\n]*\\*\\*${exposure[1].replace('.', '\\.')}\\*\\*`))
  })

  it('the unit keeps the drain inside TimeoutStopSec and binds low ports without root', async () => {
    const unit = await fs.readFile(UNIT, 'utf8')
    const directive = (name) => (unit.match(new RegExp(`^${name}=(.*)$`, 'm')) || [])[1]
    const schema = require('../../lib/config/schema.json')
    assert.ok(Number(directive('TimeoutStopSec')) * 1000 > schema.properties.shutdownTimeout.default)
    assert.equal(directive('User'), 'svr')
    assert.equal(directive('AmbientCapabilities'), 'CAP_NET_BIND_SERVICE')
    assert.equal(directive('CapabilityBoundingSet'), 'CAP_NET_BIND_SERVICE')
    assert.equal(directive('ExecReload'), '/bin/kill -HUP $MAINPID')
    assert.match(directive('ExecStart'), / --config \/etc\/svr\/config\.json$/)
  })
})

// A staged install: one tree, one throwaway service user, removed afterwards.
describe('install.sh, uninstall.sh and the init.d script, as root', () => {
  const user = `svrt${process.pid}`
  let dest = null
  let ready = false

  before(async () => {
    if (process.getuid() !== 0 || missingTools('start-stop-daemon') !== null) return
    dest = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-pkg-'))
    // The service user must be able to reach the staged tree.
    await fs.chmod(dest, 0o755)
    const installed = await install(dest, user)
    assert.equal(installed.code, 0, installed.stderr)
    ready = true
  })

  after(async () => {
    if (dest === null) return
    await stopLeftover(dest)
    await run('userdel', [user])
    await fs.rm(dest, { recursive: true, force: true })
  })

  it('lays out the tree with the right owners and modes', async (t) => {
    if (!requireRootAndTools(t, 'start-stop-daemon')) return
    assert.ok(ready)
    const expect = [
      ['usr/lib/svr', 'root', 'root', 0o755],
      ['usr/lib/svr/svr.js', 'root', 'root', 0o755],
      ['usr/lib/svr/lib/primary/main.js', 'root', 'root', 0o644],
      ['usr/lib/svr/node_modules/send/package.json', 'root', 'root', 0o644],
      ['usr/bin/svr', 'root', 'root', 0o755],
      ['etc/svr', 'root', user, 0o750],
      ['etc/svr/config.json', 'root', user, 0o640],
      ['etc/svr/serverSideScript.js', 'root', user, 0o640],
      ['etc/svr/mods', 'root', user, 0o750],
      ['var/www/svr/index.html', 'root', 'root', 0o644],
      ['var/log/svr', user, user, 0o750],
      ['var/lib/svr', user, user, 0o750],
      ['lib/systemd/system/svr.service', 'root', 'root', 0o644],
      ['etc/init.d/svr', 'root', 'root', 0o755],
      ['etc/default/svr', 'root', 'root', 0o644],
      ['etc/logrotate.d/svr', 'root', 'root', 0o644]
    ]
    const ids = await userIds(user)
    for (const [rel, owner, group, mode] of expect) {
      const st = await fs.stat(path.join(dest, rel))
      assert.equal(st.mode & 0o7777, mode, `${rel} mode ${(st.mode & 0o7777).toString(8)}`)
      assert.equal(st.uid, owner === 'root' ? 0 : ids.uid, `${rel} owner`)
      assert.equal(st.gid, group === 'root' ? 0 : ids.gid, `${rel} group`)
    }
    // Nothing of the code is writable by the service user.
    const writable = await run('find', [path.join(dest, 'usr/lib/svr'), '(', '-perm', '-o+w', '-o', '-perm', '-g+w', '-o', '-not', '-user', 'root', ')', '-print', '-quit'])
    assert.equal(writable.stdout, '')
    assert.doesNotMatch(await fs.readFile(path.join(dest, 'lib/systemd/system/svr.service'), 'utf8'), /^User=svr$/m)
    const shipped = JSON.parse(await fs.readFile(path.join(dest, 'etc/svr/config.json'), 'utf8'))
    assert.equal(shipped.port, 80)
    assert.equal(shipped.wwwroot, '/var/www/svr')
    assert.equal(shipped.logDirectory, '/var/log/svr')
    assert.equal(shipped.stateDirectory, '/var/lib/svr')
    await fs.access(path.join(dest, 'usr/lib/svr/node_modules/send'))
    await assert.rejects(fs.access(path.join(dest, 'usr/lib/svr/node_modules/eslint')), 'no dev dependencies')
  })

  it('a second run gives the same tree and keeps an edited config', async (t) => {
    if (!requireRootAndTools(t, 'start-stop-daemon')) return
    const configFile = path.join(dest, 'etc/svr/config.json')
    const edited = (await fs.readFile(configFile, 'utf8')).replace('"port": 80', '"port": 8081')
    await fs.writeFile(configFile, edited)
    const first = await snapshot(dest)
    const again = await install(dest, user)
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /kept existing \/etc\/svr\/config\.json/)
    assert.deepEqual(await snapshot(dest), first)
    assert.equal(await fs.readFile(configFile, 'utf8'), edited)
  })

  it('init.d: start, status, serve, reload, stop with a request in flight, status', async (t) => {
    if (!requireRootAndTools(t, 'start-stop-daemon', 'setpriv', 'prlimit')) return
    const port = await freePrivilegedPort()
    const env = { ...process.env, SVR_DEFAULTS: await stagedDefaults(dest, user) }
    const initd = (action) => run(path.join(dest, 'etc/init.d/svr'), [action], { env })
    await writeStagedConfig(dest, port, {})
    await fs.writeFile(path.join(dest, 'etc/svr/serverSideScript.js'), SLOW_SCRIPT)

    const start = await initd('start')
    assert.equal(start.code, 0, start.stdout + start.stderr)
    try {
      const status = await initd('status')
      assert.equal(status.code, 0, status.stdout)
      const pid = Number(await fs.readFile(path.join(dest, 'run/svr/svr.pid'), 'utf8'))
      assert.equal((await fs.stat(`/proc/${pid}`)).uid, (await userIds(user)).uid, 'runs as the service user')

      const page = await request(port, '/')
      assert.equal(page.status, 200, 'a port below 1024 without root')
      assert.equal(page.headers['x-staged'], undefined)

      await writeStagedConfig(dest, port, { 'X-Staged': 'reloaded' })
      const reload = await initd('reload')
      assert.equal(reload.code, 0, reload.stdout + reload.stderr)
      assert.equal(await waitForHeader(port, 'x-staged', 'reloaded'), true, 'the reloaded config serves')
      assert.equal(Number(await fs.readFile(path.join(dest, 'run/svr/svr.pid'), 'utf8')), pid, 'reload keeps the main process')

      const slow = request(port, '/slow', { timeout: 20000 })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const stop = await initd('stop')
      const answered = await slow
      assert.equal(stop.code, 0, stop.stdout + stop.stderr)
      assert.equal(answered.status, 200)
      assert.equal(answered.body, 'slow done')
      // The service user wrote its access log into the log directory.
      const accessLog = await fs.readFile(path.join(dest, 'var/log/svr/access.log'), 'utf8')
      // Chunked, counted with its framing as nginx counts it: "9\r\nslow done\r\n0\r\n\r\n".
      assert.match(accessLog, /"GET \/slow HTTP\/1\.1" 200 19 /)
      assert.equal((await fs.stat(path.join(dest, 'var/log/svr/access.log'))).uid, (await userIds(user)).uid)
    } finally {
      await initd('stop')
    }
    const stopped = await initd('status')
    assert.equal(stopped.code, 3, stopped.stdout)
  })

  it('init.d refuses to start with an invalid config, naming it (LSB 6)', async (t) => {
    if (!requireRootAndTools(t, 'start-stop-daemon', 'setpriv', 'prlimit')) return
    const env = { ...process.env, SVR_DEFAULTS: await stagedDefaults(dest, user) }
    const configFile = path.join(dest, 'etc/svr/config.json')
    await fs.writeFile(configFile, '{"port": 70000}')
    const start = await run(path.join(dest, 'etc/init.d/svr'), ['start'], { env })
    assert.equal(start.code, 6, start.stdout + start.stderr)
    assert.match(start.stdout + start.stderr, /\/port/)
  })

  it('uninstall.sh keeps config and content; --purge removes them', async (t) => {
    if (!requireRootAndTools(t, 'start-stop-daemon')) return
    const keep = await run(path.join(PACKAGING, 'uninstall.sh'), [], { env: { ...process.env, DESTDIR: dest } })
    assert.equal(keep.code, 0, keep.stderr)
    await assert.rejects(fs.access(path.join(dest, 'usr/lib/svr')))
    await assert.rejects(fs.access(path.join(dest, 'usr/bin/svr')))
    await assert.rejects(fs.access(path.join(dest, 'lib/systemd/system/svr.service')))
    await fs.access(path.join(dest, 'etc/svr/config.json'))
    await fs.access(path.join(dest, 'var/www/svr/index.html'))
    const purge = await run(path.join(PACKAGING, 'uninstall.sh'), ['--purge'], { env: { ...process.env, DESTDIR: dest } })
    assert.equal(purge.code, 0, purge.stderr)
    for (const rel of ['etc/svr', 'var/www/svr', 'var/log/svr', 'var/lib/svr']) {
      await assert.rejects(fs.access(path.join(dest, rel)), rel)
    }
  })
})

const SLOW_SCRIPT = `if (href === '/slow') {
  setTimeout(function () {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end('slow done')
  }, 2000)
  return
}
`

function install (dest, user) {
  return run(path.join(PACKAGING, 'install.sh'), ['--user', user], { env: { ...process.env, DESTDIR: dest } })
}

async function userIds (user) {
  const { stdout } = await run('id', ['-u', user])
  const { stdout: gid } = await run('id', ['-g', user])
  return { uid: Number(stdout), gid: Number(gid) }
}

// Paths, modes, owners and contents of every file: what "the same result" means.
async function snapshot (dest) {
  const { stdout } = await run('sh', ['-c', 'find . -printf "%p %m %u %g %s\\n" | sort && find . -type f -not -path "./var/log/*" -exec md5sum {} + | sort'], { cwd: dest, maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

async function stagedDefaults (dest, user) {
  const file = path.join(dest, 'etc/default/svr')
  await fs.writeFile(file, [
    `SVR_HOME=${dest}/usr/lib/svr`,
    `CONFIG=${dest}/etc/svr/config.json`,
    `SVR_USER=${user}`,
    `SVR_GROUP=${user}`,
    `RUN_DIR=${dest}/run/svr`,
    `PIDFILE=${dest}/run/svr/svr.pid`,
    `OUTPUT=${dest}/var/log/svr/svr.out`,
    'STOP_TIMEOUT=20',
    ''
  ].join('\n'))
  return file
}

async function writeStagedConfig (dest, port, customHeaders) {
  const file = path.join(dest, 'etc/svr/config.json')
  const config = JSON.parse(await fs.readFile(path.join(dest, 'etc/svr/config.json.dist'), 'utf8'))
  Object.assign(config, {
    port: `127.0.0.1:${port}`,
    wwwroot: path.join(dest, 'var/www/svr'),
    logDirectory: path.join(dest, 'var/log/svr'),
    stateDirectory: path.join(dest, 'var/lib/svr'),
    workers: 2,
    customHeaders
  })
  await fs.writeFile(file, JSON.stringify(config, null, 2))
}

// A port below 1024 shows that the capability reaches the service user.
async function freePrivilegedPort () {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 900 + Math.floor(Math.random() * 100)
    const free = await new Promise((resolve) => {
      const server = net.createServer()
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error('no free port in 900-999')
}

async function waitForHeader (port, name, value) {
  const deadline = Date.now() + 15000
  while (Date.now() < deadline) {
    const res = await request(port, '/').catch(() => null)
    if (res && res.headers[name] === value) return true
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}

async function stopLeftover (dest) {
  const pid = Number(await fs.readFile(path.join(dest, 'run/svr/svr.pid'), 'utf8').catch(() => ''))
  if (!pid) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch (err) {
    if (err.code !== 'ESRCH') throw err
  }
}

describe('automatic HTTPS in the package', () => {
  it('keeps its keys and certificates under the unit\'s StateDirectory, the one writable state path', async (t) => {
    const shipped = JSON.parse(await fs.readFile(path.join(PACKAGING, 'config.json'), 'utf8'))
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-pkg-acme-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'config.json')
    await fs.writeFile(file, JSON.stringify({ ...shipped, secure: true, domain: 'www.example.com', acme: { enabled: true, agreeToTerms: true } }))
    const config = await loadConfig(file)
    assert.equal(config.acme.storageDirectory, '/var/lib/svr/acme')
    const unit = await fs.readFile(UNIT, 'utf8')
    assert.match(unit, /^StateDirectory=svr$/m)
    assert.match(unit, /^ProtectSystem=strict$/m)
    // Files svr makes are private even where it does not set a mode.
    assert.match(unit, /^UMask=0077$/m)
  })
})
