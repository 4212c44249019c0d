'use strict'

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const { SVR, SvrProcess } = require('./server')
const { requireTools } = require('./tools')

/**
 * Run svr.js on a pseudo-terminal (`script -qfec`), so that its stdin is a
 * TTY and the console is on. Lines written with `type` arrive as typed.
 * Everything it started is killed after the test. Its suite skips
 * without `script` (skipWithout('script')); under CI this fails then.
 * @param {object} t node:test context
 * @param {string} configFile
 * @param {string[]} [args] more command-line arguments
 * @returns {Promise<TtySvr>}
 */
async function startSvrOnTty (t, configFile, args = []) {
  requireTools(null, 'script')
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

class TtySvr extends SvrProcess {
  // Terminal output: colours and carriage returns dropped.
  decode (chunk) {
    // eslint-disable-next-line no-control-regex
    return chunk.toString().replace(/\x1b\[[0-9;]*[A-Za-z]|\r/g, '')
  }

  /**
   * @param {string} line a console command
   */
  type (line) {
    this.child.stdin.write(line + '\n')
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

module.exports = { startSvrOnTty }
