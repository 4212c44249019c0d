'use strict'

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const { SVR } = require('./server')

/**
 * Whether util-linux `script` is there to give svr a pseudo-terminal.
 * @returns {boolean}
 */
function hasScript () {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * Run svr.js on a pseudo-terminal (`script -qfec`), so that its stdin is a
 * TTY and the console is on. Lines written with `type` arrive as typed.
 * Everything it started is killed after the test.
 * @param {object} t node:test context
 * @param {string} configFile
 * @param {string[]} [args] more command-line arguments
 * @returns {Promise<TtySvr>}
 */
async function startSvrOnTty (t, configFile, args = []) {
  const command = [process.execPath, SVR, '--config', configFile, ...args].map(shellQuote).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
  const svr = new TtySvr(child)
  t.after(() => svr.kill())
  await svr.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 15000)
  return svr
}

function shellQuote (text) {
  return "'" + text.replace(/'/g, "'\\''") + "'"
}

class TtySvr {
  constructor (child) {
    this.child = child
    this.output = ''
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    this.exitInfo = null
    this.exited.then((info) => { this.exitInfo = info })
    this.waiters = new Set()
    const onData = (chunk) => {
      // Terminal output: drop colours and carriage returns.
      // eslint-disable-next-line no-control-regex
      this.output += chunk.toString().replace(/\x1b\[[0-9;]*[A-Za-z]|\r/g, '')
      for (const waiter of this.waiters) waiter()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
  }

  /**
   * @param {string} line a console command
   */
  type (line) {
    this.child.stdin.write(line + '\n')
  }

  /**
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
          reject(new Error('svr exited before printing ' + pattern + '\n' + this.output))
        }
      }
      const timer = setTimeout(() => {
        finish()
        reject(new Error('timed out waiting for ' + pattern + '\n' + this.output))
      }, timeout)
      const finish = () => {
        clearTimeout(timer)
        this.waiters.delete(check)
      }
      this.waiters.add(check)
      this.exited.then(() => setImmediate(check))
      check()
    })
  }

  /** pids of the workers, from the "worker N up (pid P)" lines (the latest per slot) */
  workerPids () {
    const pids = new Map()
    for (const match of this.output.matchAll(/worker (\d+) up \(pid (\d+)\)/g)) pids.set(Number(match[1]), Number(match[2]))
    return pids
  }

  // svr runs in the session `script` created for it, out of reach of a
  // signal to our child's group: find it through /proc.
  primaryPid () {
    try {
      const children = fs.readFileSync('/proc/' + this.child.pid + '/task/' + this.child.pid + '/children', 'utf8').trim()
      return children === '' ? null : Number(children.split(/\s+/)[0])
    } catch {
      return null
    }
  }

  async kill () {
    if (this.exitInfo !== null) return
    const primary = this.primaryPid()
    const group = (signal) => {
      try {
        if (primary !== null) process.kill(-primary, signal)
      } catch {
        // Already gone.
      }
    }
    group('SIGTERM')
    const timer = setTimeout(() => {
      group('SIGKILL')
      this.child.kill('SIGKILL')
    }, 3000)
    await this.exited
    clearTimeout(timer)
    group('SIGKILL')
  }
}

module.exports = { startSvrOnTty, hasScript }
