'use strict'

const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

// Under CI (any non-empty CI) every tool below is installed by .ci/run, so
// a missing one is a broken setup and fails the test; elsewhere it skips.
const IN_CI = Boolean(process.env.CI)

/**
 * Every program a test drives that Node and npm do not bring, with the
 * Debian package that installs it. .ci/run and the README install exactly
 * these packages (test/unit/test-tools.test.js holds them to it).
 */
const TOOLS = {
  chromium: 'chromium',
  nginx: 'nginx',
  caddy: 'caddy',
  haproxy: 'haproxy',
  goaccess: 'goaccess',
  logrotate: 'logrotate',
  shellcheck: 'shellcheck',
  'systemd-analyze': 'systemd',
  'start-stop-daemon': 'dpkg',
  setpriv: 'util-linux',
  prlimit: 'util-linux',
  script: 'bsdutils',
  strace: 'strace',
  h2load: 'nghttp2-client',
  valgrind: 'valgrind',
  callgrind_control: 'valgrind',
  'redis-server': 'redis-server',
  'redis-sentinel': 'redis-sentinel',
  knotd: 'knot',
  nsupdate: 'bind9-dnsutils'
}

/**
 * Programs that are no Debian package, built from Go modules with `go
 * install` (.ci/run installs exactly these), by name.
 */
const GO_TOOLS = {
  pebble: 'github.com/letsencrypt/pebble/v2/cmd/pebble@v2.10.1',
  'pebble-challtestsrv': 'github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv@v2.10.1'
}

// Where `go install` puts programs and keeps module sources, without
// asking the go command (which need not be on PATH): $GOBIN, else
// $GOPATH/bin, with GOPATH defaulting to ~/go.
function goPath () {
  return (process.env.GOPATH || path.join(os.homedir(), 'go')).split(path.delimiter)[0]
}

/**
 * The directory of a Go module's source in the module cache.
 * @param {string} module "path@version", as in GO_TOOLS without the command part
 * @returns {string}
 */
function goModuleDir (module) {
  return path.join(process.env.GOMODCACHE || path.join(goPath(), 'pkg', 'mod'), module)
}

/**
 * Where a program is on PATH (the way a shell finds it), or null. A Go
 * tool is also found where `go install` puts it.
 * @param {string} name
 * @returns {string|null}
 */
function which (name) {
  const dirs = (process.env.PATH || '').split(path.delimiter)
  if (Object.hasOwn(GO_TOOLS, name)) dirs.push(process.env.GOBIN || path.join(goPath(), 'bin'))
  for (const dir of dirs) {
    if (dir === '') continue
    const file = path.join(dir, name)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {
      // Not in this directory.
    }
  }
  return null
}

/**
 * Why a test that needs these tools cannot run here, or null when all of
 * them are on PATH.
 * @param {...string} names keys of TOOLS
 * @returns {string|null} e.g. "needs nginx, not on PATH (apt-get install -y nginx)"
 */
function missingTools (...names) {
  const missing = names.filter((name) => which(name) === null)
  if (missing.length === 0) return null
  const fromGo = missing.filter((name) => Object.hasOwn(GO_TOOLS, name))
  const packages = [...new Set(missing.filter((name) => !fromGo.includes(name)).map(packageOf))]
  const commands = []
  if (packages.length !== 0) commands.push(`apt-get install -y ${packages.join(' ')}`)
  if (fromGo.length !== 0) commands.push(`go install ${fromGo.map((name) => GO_TOOLS[name]).join(' ')}`)
  return `needs ${missing.join(', ')}, not on PATH (${commands.join('; ')})`
}

function packageOf (name) {
  assert.ok(Object.hasOwn(TOOLS, name), `${name} is not in TOOLS or GO_TOOLS of test/helpers/tools.js`)
  return TOOLS[name]
}

/**
 * The `skip` option of a describe() or it() that needs these tools: the
 * reason when one is missing outside CI, otherwise false. Under CI the
 * tests then run: call requireTools in their before hook so that they fail
 * with the reason instead of an obscure spawn error.
 * @param {...string} names keys of TOOLS
 * @returns {string|false}
 */
function skipWithout (...names) {
  return IN_CI ? false : (missingTools(...names) || false)
}

/**
 * At the start of a test (or a before hook, with `t` null): true when the
 * tools are there. A missing one skips the test with the reason (returning
 * false), or under CI fails it.
 * @param {object|null} t node:test context
 * @param {...string} names keys of TOOLS
 * @returns {boolean}
 */
function requireTools (t, ...names) {
  const reason = missingTools(...names)
  if (reason === null) return true
  unavailable(t, reason)
  return false
}

/**
 * Like requireTools, for a test that must run as root (it installs
 * packages or adds users); CI runs as root.
 * @param {object|null} t node:test context
 * @returns {boolean}
 */
function requireRoot (t) {
  if (process.getuid() === 0) return true
  unavailable(t, 'needs root (sudo npm test)')
  return false
}

function unavailable (t, reason) {
  if (IN_CI) assert.fail(reason + '; under CI it must run (.ci/run provides it)')
  if (t !== null) t.skip(reason)
}

// Ports for servers that must be told their port in advance (svr across
// a reload, Pebble, nginx) come from below the kernel's ephemeral range:
// the kernel picks ephemeral ports for every bind to port 0 and every
// outgoing connection, so a port found free there and closed again could
// be taken by any test's connection before svr binds it (EADDRINUSE on a
// loaded machine). Below that range only these helpers hand ports out,
// and each port is reserved for the life of the test process that got it
// by a file in a directory every test process shares (test files run in
// parallel processes).
const RESERVED_PORTS = 8192
const reservations = new Set()

/**
 * The ports freePorts may hand out: the RESERVED_PORTS below the
 * ephemeral range, or null where that is too low to leave room.
 * @returns {{low: number, high: number}|null}
 */
function portRange () {
  let low = 32768
  try {
    low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
  } catch {
    // Not Linux: the usual range.
  }
  if (!(low - RESERVED_PORTS >= 1024)) return null
  return { low: low - RESERVED_PORTS, high: low - 1 }
}

function reservationDir () {
  const dir = path.join(os.tmpdir(), 'svr-test-ports-' + process.getuid())
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * Reserve a port for this process, unless a living process has it.
 * @returns {boolean}
 */
function reserve (dir, port) {
  const file = path.join(dir, String(port))
  for (let attempt = 0; attempt < 2; attempt++) {
    if (claim(dir, file)) {
      reservations.add(file)
      return true
    }
    // A process that died without letting go (killed) leaves its files.
    const holder = Number(readOrEmpty(file))
    if (holder === process.pid || (holder > 0 && isAlive(holder))) return false
    fs.rmSync(file, { force: true })
  }
  return false
}

// The port's file appears with the holder's pid already in it: a hard link
// to this process's own pid file, made under the port's name, fails when
// that name exists. (Creating the file and then writing the pid let another
// process read it empty in between, take it for a dead holder's, remove it
// and reserve the same port.)
function claim (dir, file) {
  try {
    fs.linkSync(pidFile(dir), file)
    return true
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    return false
  }
}

// This process's pid file in the reservation directory, written once.
let ownPidFile = null

function pidFile (dir) {
  if (ownPidFile === null) {
    ownPidFile = path.join(dir, '.pid-' + process.pid)
    fs.writeFileSync(ownPidFile, String(process.pid))
    // Every reservation of this process goes with it, the pid file first.
    if (reservations.size === 0) process.once('exit', releaseReservations)
    reservations.add(ownPidFile)
  }
  return ownPidFile
}

function readOrEmpty (file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

function isAlive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

function releaseReservations () {
  for (const file of reservations) fs.rmSync(file, { force: true })
  reservations.clear()
}

// Whether nothing listens on the port now (another program than the tests
// may use a port of the range).
function bindable (port) {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

// A port of the kernel's choice, closed again: where there is no range below.
function ephemeralPort () {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * Different TCP ports on 127.0.0.1, free now and kept for this test
 * process: for servers that must be told their port in advance (a reload
 * that keeps it or moves to another, an nginx upstream, Pebble). Nothing
 * else takes them before the server binds them (see RESERVED_PORTS).
 * @param {number} count
 * @returns {Promise<number[]>}
 */
async function freePorts (count) {
  const range = portRange()
  if (range === null) return Promise.all(Array.from({ length: count }, ephemeralPort))
  const dir = reservationDir()
  const size = range.high - range.low + 1
  const first = Math.floor(Math.random() * size)
  const ports = []
  for (let i = 0; i < size && ports.length < count; i++) {
    const port = range.low + (first + i) % size
    if (!reserve(dir, port)) continue
    if (await bindable(port)) ports.push(port)
  }
  assert.equal(ports.length, count, `no ${count} free ports left in ${range.low}-${range.high}`)
  return ports
}

/**
 * One port of freePorts.
 * @returns {Promise<number>}
 */
async function freePort () {
  return (await freePorts(1))[0]
}

/**
 * @param {string} name a program looked up on PATH
 * @returns {Promise<boolean>} whether it is installed
 */
async function hasCommand (name) {
  return which(name) !== null
}

module.exports = { TOOLS, GO_TOOLS, goModuleDir, which, missingTools, skipWithout, requireTools, requireRoot, freePort, freePorts, portRange, hasCommand }
