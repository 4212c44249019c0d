'use strict'

const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { which, freePort, freePorts } = require('./tools')

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

/**
 * A store Redis Sentinel watches: a primary, its replica and one sentinel
 * (quorum 1) on loopback ports, that fails over a second after the
 * primary stops answering. Everything is stopped after the test.
 * @param {object} t node:test context
 * @returns {Promise<{primary: RedisServer, replica: RedisServer, sentinel: RedisServer, masterName: string}>}
 */
async function startSentinelStore (t) {
  const [primaryPort, replicaPort, sentinelPort] = await freePorts(3)
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-sentinel-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const primary = new RedisServer(primaryPort, null)
  const replica = new RedisServer(replicaPort, null, ['--replicaof', '127.0.0.1', String(primaryPort)])
  // Sentinel rewrites its configuration file as it learns: one of its own.
  const configFile = path.join(dir, 'sentinel.conf')
  await fs.writeFile(configFile, [
    'port ' + sentinelPort,
    'bind 127.0.0.1',
    'sentinel monitor svr 127.0.0.1 ' + primaryPort + ' 1',
    'sentinel down-after-milliseconds svr 1000',
    'sentinel failover-timeout svr 5000',
    ''
  ].join('\n'))
  const sentinel = new RedisServer(sentinelPort, null, [], { program: 'redis-sentinel', configFile })
  for (const server of [sentinel, replica, primary]) t.after(() => server.stop())
  await primary.start()
  await replica.start()
  await sentinel.start()
  return { primary, replica, sentinel, masterName: 'svr' }
}

class RedisServer {
  /**
   * @param {number} port
   * @param {string|null} password
   * @param {string[]} [extra] more arguments
   * @param {{program?: string, configFile?: string}} [opts] redis-sentinel with its configuration file
   */
  constructor (port, password, extra = [], opts = {}) {
    this.port = port
    this.password = password
    this.extra = extra
    this.program = opts.program || 'redis-server'
    this.configFile = opts.configFile || null
    this.url = 'redis://127.0.0.1:' + port
    this.child = null
  }

  async start () {
    const args = this.configFile === null
      ? ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', ...this.extra]
      : [this.configFile]
    if (this.password !== null) args.push('--requirepass', this.password)
    this.child = spawn(which(this.program), args, { stdio: 'ignore' })
    const deadline = Date.now() + START_TIMEOUT_MS
    while (!(await this.answers())) {
      if (Date.now() > deadline) throw new Error('redis-server did not answer on port ' + this.port + ' within ' + START_TIMEOUT_MS + ' ms')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await this.assertOwnServer()
  }

  // A server that answered on the port but is not the one started here (it
  // could not bind, and another program's answered) would hand the test
  // another's data: fail with what answered instead.
  async assertOwnServer () {
    const info = await this.command(this.password === null ? ['INFO server'] : ['AUTH ' + this.password, 'INFO server'])
    const pid = /process_id:(\d+)/.exec(info)
    if (pid === null || Number(pid[1]) !== this.child.pid) {
      throw new Error('port ' + this.port + ' is answered by another redis-server (pid ' + (pid === null ? '?' : pid[1]) + '), not the one started (pid ' + this.child.pid + ')')
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

module.exports = { startRedis, startSentinelStore }
