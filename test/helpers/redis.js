'use strict'

const { spawn } = require('node:child_process')
const net = require('node:net')
const { which, freePort } = require('./tools')

const START_TIMEOUT_MS = 10000

/**
 * A real redis-server (Debian's) on a loopback port of its own, with
 * nothing kept on disk, stopped after the test. It can be stopped and
 * started again on the same port, as a store that restarts.
 * @param {object} t node:test context
 * @param {{password?: string}} [opts] a password without white space
 * @returns {Promise<RedisServer>}
 */
async function startRedis (t, opts = {}) {
  const server = new RedisServer(await freePort(), opts.password || null)
  t.after(() => server.stop())
  await server.start()
  return server
}

class RedisServer {
  constructor (port, password) {
    this.port = port
    this.password = password
    this.url = 'redis://127.0.0.1:' + port
    this.child = null
  }

  async start () {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes']
    if (this.password !== null) args.push('--requirepass', this.password)
    this.child = spawn(which('redis-server'), args, { stdio: 'ignore' })
    const deadline = Date.now() + START_TIMEOUT_MS
    while (!(await this.answers())) {
      if (Date.now() > deadline) throw new Error('redis-server did not answer on port ' + this.port + ' within ' + START_TIMEOUT_MS + ' ms')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Stop the server (SIGKILL: a crash, not a shutdown) and wait for it to be gone. */
  async stop () {
    const child = this.child
    if (child === null) return
    this.child = null
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await gone
  }

  // Whether it answers PING (with AUTH first when it has a password).
  answers () {
    return this.command(this.password === null ? ['PING'] : ['AUTH ' + this.password, 'PING']).then((reply) => reply.includes('+PONG'), () => false)
  }

  /**
   * Send inline commands, one per line, and collect the replies until the
   * connection is closed (QUIT is sent last).
   * @param {string[]} lines
   * @returns {Promise<string>} the raw replies
   */
  command (lines) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.port, '127.0.0.1')
      let reply = ''
      socket.setEncoding('utf8')
      socket.on('data', (chunk) => { reply += chunk })
      socket.on('end', () => resolve(reply))
      socket.on('error', reject)
      socket.setTimeout(2000, () => socket.destroy(new Error('redis-server did not answer')))
      socket.end(lines.join('\r\n') + '\r\nQUIT\r\n')
    })
  }
}

module.exports = { startRedis }
