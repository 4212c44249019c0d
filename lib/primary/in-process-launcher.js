'use strict'

const { EventEmitter } = require('node:events')
const { inProcessChannel, NS } = require('../ipc')
const { startWorker } = require('../worker/worker')
const { ConnectionFeeds } = require('./connection-feed')
const { ProcessMetrics } = require('../metrics/worker')
const { useApplicationNodePath, enterWebroot } = require('../application/process-environment')

/**
 * A worker that runs in the Supervisor's own process (--single-threaded):
 * the worker of lib/worker/worker.js over an in-process channel, behind an object
 * shaped like the part of cluster.Worker the Supervisor uses (`id`,
 * `process.pid`, `process.kill()`, `send(msg, handle, callback)`,
 * `isConnected()`, `isDead()`, `disconnect()`, `kill()`, and the events
 * 'online', 'message', 'listening', 'disconnect' and 'exit'). A socket
 * handle sent to it arrives as a port of the socket's ConnectionFeed.
 */
class InProcessWorker extends EventEmitter {
  /**
   * @param {number} id
   * @param {{feeds: ConnectionFeeds, processMetrics: ProcessMetrics}} shared what the process's workers share
   */
  constructor (id, { feeds, processMetrics }) {
    super()
    this.id = id
    this.process = { pid: process.pid, kill: (signal) => this.kill(signal) }
    this.feeds = feeds
    this.ready = false
    this.dead = false
    const { a, b } = inProcessChannel()
    this.channel = a
    a.on('message', (msg) => this.receive(msg))
    // exit: what process.exit() is to a cluster worker.
    this.worker = startWorker({ channel: b, slot: null, name: 'single', processMetrics, exit: (code) => this.exited(code, null) })
    setImmediate(() => this.emit('online'))
  }

  receive (msg) {
    if (msg !== null && typeof msg === 'object' && msg.ns === NS && msg.act === 'listening' && !this.ready) {
      this.ready = true
      this.emit('listening')
    }
    this.emit('message', msg)
  }

  /**
   * @param {object} msg
   * @param {object|Function} [handle] a bound socket handle (its feed gives the worker a port), or the callback
   * @param {Function} [callback]
   * @returns {boolean}
   */
  send (msg, handle, callback) {
    if (handle !== undefined && typeof handle !== 'function') handle = this.feeds.port(handle)
    return this.channel.send(msg, handle, callback)
  }

  isConnected () {
    return this.channel.connected
  }

  isDead () {
    return this.dead
  }

  /** Close the channel: the worker drains and exits, as a cluster worker does without its primary. */
  disconnect () {
    this.channel.disconnect()
  }

  /**
   * What a signal does to a cluster worker: its connections are dropped,
   * and it is gone.
   * @param {string} [signal]
   */
  kill (signal = 'SIGTERM') {
    if (this.dead) return
    this.worker.abort()
    this.exited(null, signal)
  }

  // The worker is done: its log files are closed, its timers stopped.
  async exited (code, signal) {
    if (this.dead) return
    this.dead = true
    this.channel.disconnect()
    await this.worker.runtime.logs.close().catch(() => {})
    this.emit('disconnect')
    this.emit('exit', code, signal)
  }
}

/**
 * How the Supervisor starts its worker with --single-threaded: one slot, a
 * worker in this process. What the process's workers share (the
 * connection feeds of the Supervisor's sockets, the process metrics) lives
 * here, as long as the Supervisor.
 */
class InProcessLauncher {
  constructor () {
    // Its worker's servers listen on ports of the socket's feed, in this process.
    this.handsConnections = false
    this.shared = { feeds: new ConnectionFeeds(), processMetrics: new ProcessMetrics('single') }
    this.lastId = 0
    // The options of the newest worker that got ready.
    this.serving = null
    // Application code finds svr's packages (as a cluster worker's NODE_PATH gives them).
    useApplicationNodePath()
  }

  /**
   * @param {object} slot
   * @param {object} options the runtime options the worker will boot with
   * @returns {InProcessWorker}
   */
  launch (slot, options) {
    // What a cluster worker gets in its environment, as far as one process can.
    Object.assign(process.env, options.config.environmentVariables)
    const worker = new InProcessWorker(++this.lastId, this.shared)
    worker.once('listening', () => { this.serving = options })
    worker.once('exit', () => {
      // A worker that failed to boot entered its webroot all the same; the
      // application code still running is at home in the other one.
      if (!worker.ready && this.serving !== null) returnTo(this.serving.config)
    })
    return worker
  }

  /** @returns {number} one slot, whatever `workers` says */
  count () {
    return 1
  }

  /**
   * @param {object} slot
   * @param {InProcessWorker} [worker]
   * @returns {string} the worker in log lines: each one the Supervisor starts is numbered
   */
  name (slot, worker) {
    return worker === undefined ? 'in-process worker' : 'in-process worker #' + worker.id
  }

  /** @returns {null} the label of the worker of --single-threaded: `single` on the status page and in the metrics */
  label () {
    return null
  }
}

function returnTo (config) {
  try {
    enterWebroot(config)
  } catch {
    // The webroot in use was removed; the next reload says so.
  }
}

module.exports = { InProcessWorker, InProcessLauncher }
