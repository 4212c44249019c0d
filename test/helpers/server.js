'use strict'

const { spawn, spawnSync, execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')

const ROOT = path.resolve(__dirname, '..', '..')
const SVR = path.join(ROOT, 'svr.js')
const run = promisify(execFile)
const GRACEFUL_STOP_MS = 3000
const LISTENING = /listening on (?:(https?):\/\/(\[[^\]]+\]|[^:\s]+):(\d+)|unix:(\S+))/

/**
 * Remove a test's directory, never failing: after hooks run in the order
 * they were registered and one that throws skips the rest, so a failure
 * here (a server started later still writing into it: ENOTEMPTY) would
 * leave that server running and the test file hanging until its timeout.
 * @param {string} dir
 */
async function removeDir (dir) {
  try {
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
  } catch (err) {
    process.stderr.write('could not remove ' + dir + ': ' + err.message + '\n')
  }
}

/**
 * Make a temporary directory with a webroot and a config file.
 * @param {object} t node:test context (cleans up after the test)
 * @param {object} [config] merged over the test defaults
 * @param {Object<string, string|Buffer>} [files] webroot-relative path -> content
 * @returns {Promise<{dir: string, webroot: string, configFile: string, writeConfig: Function}>}
 */
async function makeSite (t, config = {}, files = { 'index.html': '<h1>test index</h1>\n' }) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-test-'))
  t.after(() => removeDir(dir))
  const webroot = path.join(dir, 'webroot')
  await fs.mkdir(webroot)
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(webroot, name)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, content)
  }
  const configFile = path.join(dir, 'config.json')
  async function writeConfig (values) {
    const full = { port: '127.0.0.1:0', wwwroot: 'webroot', workers: 2, ...values }
    await fs.writeFile(configFile, JSON.stringify(full, null, 2))
  }
  await writeConfig(config)
  return { dir, webroot, configFile, writeConfig }
}

/**
 * The command line that runs svr.js (this checkout's, or `opts.svr`), as
 * root, or through setpriv as nobody (`asNobody`) or as `user` and its group.
 * @param {string[]} args
 * @param {{asNobody?: boolean, user?: string, svr?: string}} opts
 * @returns {string[]}
 */
function svrCommand (args, opts) {
  const command = [process.execPath, opts.svr || SVR, ...args]
  let setpriv = null
  if (opts.asNobody) setpriv = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--']
  else if (opts.user) setpriv = ['setpriv', '--reuid=' + opts.user, '--regid=' + opts.user, '--init-groups', '--']
  if (setpriv === null) return command
  assertRuns(setpriv, opts.asNobody ? 'nobody' : opts.user)
  return [...setpriv, ...command]
}

// Users that can run the Node.js of the tests, by name.
const nodeRunners = new Map()

/**
 * svr as another user runs on the Node.js of the tests (its primary, and
 * the workers it forks as that user): one kept where that user cannot
 * enter (a 0700 home directory) would leave svr with a bare EACCES from
 * the fork of its first worker.
 * @param {string[]} setpriv the command prefix that runs a program as the user
 * @param {string} user its name
 */
function assertRuns (setpriv, user) {
  if (!nodeRunners.has(user)) {
    nodeRunners.set(user, spawnSync(setpriv[0], [...setpriv.slice(1), 'test', '-x', process.execPath]).status === 0)
  }
  if (!nodeRunners.get(user)) {
    throw new Error(`the user ${user} cannot run ${process.execPath}: tests run svr as ${user} on the Node.js that runs them; keep it in a directory every user may enter`)
  }
}

/**
 * Run svr.js with arguments and collect its output; for commands that exit
 * by themselves (--check-config, bad configs, --help).
 * @param {string[]} args
 * @param {{timeout?: number, cwd?: string, asNobody?: boolean, user?: string, svr?: string}} [opts] as for startSvr
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
function runSvr (args, opts = {}) {
  return new Promise((resolve, reject) => {
    const command = svrCommand(args, opts)
    // Its own process group: what svr started (the child that reads mods'
    // declarations) goes with it when it has to be killed.
    const child = spawn(command[0], command.slice(1), { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL')
      reject(new Error('svr did not exit within ' + (opts.timeout || 10000) + ' ms\n' + stdout + stderr))
    }, opts.timeout || 10000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/**
 * The last lines svr printed, to follow a failed test's report.
 * @param {string} test
 * @param {string} output
 * @returns {string}
 */
function outputTail (test, output) {
  const lines = output.trimEnd().split('\n')
  const shown = lines.slice(-40).map((line) => '  | ' + line).join('\n')
  return `svr's output in the failed test "${test}" (last ${Math.min(lines.length, 40)} of ${lines.length} lines):\n${shown}\n`
}

/**
 * Start svr.js as a server in its own process group and wait until it
 * prints its address. The whole group is killed after the test.
 * @param {object} t node:test context
 * @param {string} configFile
 * @param {{args?: string[], timeout?: number, asNobody?: boolean, user?: string, svr?: string}} [opts]
 *   `asNobody`: run svr as the unprivileged user nobody; `user`: as this user
 *   and its group (both through setpriv; the caller must be root); `svr`:
 *   another svr.js than this checkout's (an installed one)
 */
async function startSvr (t, configFile, opts = {}) {
  const command = svrCommand(['--config', configFile, ...(opts.args || [])], opts)
  const child = spawn(command[0], command.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const server = new SvrProcess(child)
  t.after(() => {
    // What svr logged explains most failures seen only under load.
    if (t.passed === false) process.stderr.write(outputTail(t.name, server.output))
    return server.kill()
  })
  const match = await server.waitFor(LISTENING, opts.timeout || 15000)
  if (match[4] !== undefined) {
    server.socketPath = match[4]
    return server
  }
  server.port = Number(match[3])
  server.host = match[2].replace(/^\[|\]$/g, '')
  server.origin = match[1] + '://' + match[2] + ':' + match[3]
  return server
}

/**
 * An svr.js that the user nobody can run, for tests that start svr as
 * nobody (as root, which reads every file): this checkout's when nobody can
 * read it, else a copy of its code and production packages in a directory
 * anyone may read. A checkout inside a 0700 directory (root's home, a
 * `mktemp -d`) is out of nobody's reach, and svr could not even start.
 * Needs setpriv, as running as nobody does.
 * @param {object} t node:test context (removes the copy after the test)
 * @returns {Promise<string>} the path of svr.js to run (startSvr's `svr`)
 */
async function svrForNobody (t) {
  const probes = [SVR, path.join(ROOT, 'lib', 'primary', 'main.js'), require.resolve('ajv/package.json', { paths: [ROOT] })]
  if (await nobodyReads(probes)) return SVR
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-code-'))
  t.after(() => removeDir(dir))
  for (const name of ['svr.js', 'package.json', 'lib']) await fs.cp(path.join(ROOT, name), path.join(dir, name), { recursive: true })
  for (const pkg of await productionPackages()) {
    await fs.cp(pkg, path.join(dir, path.relative(ROOT, pkg)), { recursive: true, verbatimSymlinks: true })
  }
  await run('chmod', ['-R', 'a+rX', dir])
  return path.join(dir, 'svr.js')
}

async function nobodyReads (files) {
  try {
    for (const file of files) await run('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', 'test', '-r', file])
    return true
  } catch {
    return false
  }
}

// The packages svr runs with (npm's list without devDependencies), as the
// directories at the top of node_modules that hold them.
async function productionPackages () {
  let stdout
  try {
    ({ stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }))
  } catch (err) {
    // npm ls exits non-zero for extraneous packages, and still lists.
    stdout = err.stdout || ''
  }
  const top = new Set()
  const base = path.join(ROOT, 'node_modules') + path.sep
  for (const line of stdout.split('\n')) {
    if (!line.startsWith(base)) continue
    const parts = line.slice(base.length).split(path.sep)
    top.add(path.join(base, ...parts.slice(0, parts[0].startsWith('@') ? 2 : 1)))
  }
  return [...top]
}

function killGroup (child, signal) {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // The group is gone already.
  }
}

class SvrProcess {
  constructor (child) {
    this.child = child
    this.output = ''
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }))
    })
    this.exitInfo = null
    this.exited.then((info) => { this.exitInfo = info })
    this.waiters = new Set()
    const onData = (chunk) => {
      this.output += this.decode(chunk)
      for (const waiter of this.waiters) waiter()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
  }

  /**
   * @param {Buffer} chunk of stdout or stderr
   * @returns {string} the text added to `output`
   */
  decode (chunk) {
    return chunk.toString()
  }

  /**
   * Wait until the combined output (from `from` on) matches a pattern.
   * @param {RegExp} pattern
   * @param {number} [timeout]
   * @param {number} [from] output offset to search from
   * @returns {Promise<RegExpMatchArray>}
   */
  waitFor (pattern, timeout = 10000, from = 0) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.output.slice(from).match(pattern)
        if (match !== null) {
          finish()
          resolve(match)
        } else if (this.exitInfo !== null) {
          finish()
          reject(new Error('svr exited (' + JSON.stringify(this.exitInfo) + ') before printing ' + pattern + '\n' + this.output))
        }
      }
      const timer = setTimeout(() => {
        finish()
        reject(new Error('timed out waiting for ' + pattern + '\n' + this.output))
      }, timeout)
      const onExit = () => setImmediate(check)
      const finish = () => {
        clearTimeout(timer)
        this.waiters.delete(check)
      }
      this.waiters.add(check)
      this.exited.then(onExit)
      check()
    })
  }

  /** pids of the workers, read from the "worker N up (pid P)" lines */
  workerPids () {
    const pids = new Map()
    for (const match of this.output.matchAll(/worker (\d+) up \(pid (\d+)\)/g)) pids.set(Number(match[1]), Number(match[2]))
    return pids
  }

  signal (name) {
    this.child.kill(name)
  }

  /**
   * Stop the server: SIGTERM first, so that it removes its temp
   * directories, then SIGKILL to the whole group if it lingers.
   * @returns {Promise<void>}
   */
  async kill () {
    if (this.exitInfo !== null) return
    this.signalGroup('SIGTERM')
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), GRACEFUL_STOP_MS)
    await this.exited
    clearTimeout(timer)
    // Workers orphaned by a primary that died first.
    this.signalGroup('SIGKILL')
  }

  signalGroup (name) {
    try {
      process.kill(-this.child.pid, name)
    } catch {
      // The group is already gone; nothing left to clean up.
    }
  }
}

module.exports = { makeSite, removeDir, runSvr, startSvr, svrForNobody, SvrProcess, SVR }
