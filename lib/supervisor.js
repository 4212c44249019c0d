'use strict'

const fs = require('node:fs')
const { message, dispatch, workerPeer } = require('./ipc')
const { Coordinator } = require('./coordinator')
const { svrError } = require('./errors')
const { listeningLines, listenError, removeStaleSockets } = require('./listen')
const { ListenSockets } = require('./listen-sockets')
const { scriptPath } = require('./script/locate')
const { warnForwardingConfig } = require('./access/client-address')
const { PrimaryCounters } = require('./metrics/primary')
const { FairShare } = require('./balance/primary')
const { ReloadQueue } = require('./reload')
const { applyReload } = require('./rolling-reload')
const { createSlot, exitReason, backoffDelay, EXIT_REASONS, CRASH_LOOP_STREAK } = require('./slots')

const SCRIPT_WATCH_MS = 500
// How long console `open` waits for a worker to listen again.
const ACCEPTING_TIMEOUT_MS = 5000

/**
 * The primary's logic: binds the listening sockets, starts one worker per
 * slot through its launcher (cluster processes, or the one in-process
 * worker of --single-threaded), replaces crashed ones with per-slot
 * exponential back-off, rolls workers over on a reload and drains them on
 * SIGTERM/SIGINT. It never serves requests itself.
 */
class Supervisor {
  /**
   * @param {object} options runtime options with the validated config
   * @param {object} args parsed command line
   * @param {{log: object, logs: import('./logging').LogFiles}} output the primary's logger and its log files
   * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
   * @param {import('./cluster-launcher').ClusterLauncher|import('./in-process-worker').InProcessLauncher} launcher
   *   how workers are started, counted and named
   */
  constructor (options, args, { log, logs }, prepared, launcher) {
    this.options = options
    // The primary's own log files (its error.log).
    this.logs = logs
    this.prepared = prepared
    this.watcher = null
    this.args = args
    this.log = log
    this.launcher = launcher
    // Restarts and reloads, which the coordinator reports.
    this.counters = new PrimaryCounters()
    this.phase = 'booting'
    this.slots = []
    this.records = new Map()
    this.reloads = new ReloadQueue(() => applyReload(this), () => this.phase === 'running' ? null : this.phase, log)
    this.sockets = new ListenSockets()
    // What the workers report of the application code they run: the names
    // (and versions) of the mods and script, and the console commands of
    // their 4.x mods ({name, mods}).
    this.code = { mods: [], commands: [] }
    this.forceTimer = null
    this.fairShare = new FairShare((worker, share) => {
      if (worker.isConnected()) worker.send(message('fair-share', { connections: share }))
    })
    // The cluster-wide services (login throttle, status page, metrics).
    this.coordinator = new Coordinator(log, () => this.targets(), this.counters)
    // Console state every worker, including ones forked later, must share.
    this.blocked = []
    this.accepting = true
    this.handlers = {
      ...this.coordinator.table,
      listening: (msg, peer, worker) => { this.coordinator.acme.workerListening(); this.onListening(msg, worker) },
      'boot-error': (msg, peer, worker) => this.onBootError(msg, worker),
      load: (msg, peer, worker) => this.onLoad(msg, worker)
    }
    warnForwardingConfig(options.config, log)
  }

  async start () {
    const { config } = this.options
    await removeStaleSockets(config)
    try {
      this.sockets.acquire(config)
    } catch (err) {
      this.fatal(listenError(err))
      return
    }
    this.coordinator.configure(this.options)
    const count = this.launcher.count(config)
    this.log.info('svr starting: ' + count + ' worker(s), config ' + this.options.configFile +
      ', webroot ' + config.wwwroot)
    for (let id = 1; id <= count; id++) {
      const slot = createSlot(id)
      this.slots.push(slot)
      slot.worker = this.fork(slot, this.options)
    }
  }

  fork (slot, options) {
    const worker = this.launcher.launch(slot, options)
    const peer = workerPeer(worker)
    const record = { slot, worker, options, peer, ready: false, readyAt: 0, retiring: false, waiter: null, hasSockets: false }
    this.records.set(worker, record)
    worker.on('message', (msg) => dispatch(this.handlers, msg, peer, worker))
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal))
    worker.on('error', (err) => this.log.warn(this.launcher.name(slot, worker) + ' channel error:', err.message))
    // The sockets go first: the worker listens on them as soon as it has booted.
    record.hasSockets = this.sendSockets(worker, options)
    worker.send(message('boot', { options, blocked: this.blocked }))
    return worker
  }

  /**
   * @returns {boolean} whether there were sockets to send (none while the console has closed the server)
   */
  sendSockets (worker, options) {
    const handles = this.sockets.handles(options.config)
    for (const { role, handle } of handles) worker.send(message('listen', { role }), handle)
    return handles.length !== 0
  }

  onListening (msg, worker) {
    const record = this.records.get(worker)
    if (record === undefined) return
    record.ready = true
    record.readyAt = Date.now()
    const { slot } = record
    this.log.info(this.launcher.name(slot, worker) + ' up (pid ' + worker.process.pid + ')')
    // The console closed or opened the server while this worker booted.
    if (!this.accepting) {
      worker.send(message('accepting', { open: false }))
    } else if (!record.hasSockets) {
      record.hasSockets = this.sendSockets(worker, record.options)
      worker.send(message('accepting', { open: true }))
    }
    this.code = { mods: msg.mods, commands: msg.commands || [] }
    if (record.waiter !== null) {
      record.waiter.resolve()
      record.waiter = null
    } else if (slot.replacing) {
      slot.replacing = false
      this.log.info(this.launcher.name(slot) + ' replaced')
    }
    if (this.phase === 'booting' && this.slots.every(isReady, this)) {
      this.phase = 'running'
      this.announce()
    }
  }

  announce () {
    if (this.code.mods.length !== 0) this.log.info('application code: ' + this.code.mods.join(', '))
    const addresses = this.sockets.addresses(this.options.config)
    for (const line of listeningLines(addresses, this.options.config)) this.log.info(line)
    this.watchScript()
  }

  // With watchServerSideScript an edited script is rolled out like a reload.
  watchScript () {
    const file = scriptPath(this.options)
    const wanted = this.options.config.watchServerSideScript && !this.options.disableMods
    if (this.watcher !== null && (!wanted || this.watcher.file !== file)) {
      fs.unwatchFile(this.watcher.file, this.watcher.listener)
      this.watcher = null
    }
    if (!wanted || this.watcher !== null) return
    const listener = (current, previous) => {
      if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return
      this.log.info(file + ' changed; reloading')
      this.reload()
    }
    fs.watchFile(file, { interval: SCRIPT_WATCH_MS }, listener).unref()
    this.watcher = { file, listener }
  }

  onBootError (msg, worker) {
    const record = this.records.get(worker)
    const line = msg.reason
    if (record !== undefined && record.waiter !== null) {
      record.waiter.reject(new Error(line))
      record.waiter = null
      return
    }
    if (this.phase === 'booting') {
      this.fatal(svrError('SVR_ERR_WORKER_BOOT', [line]))
      return
    }
    this.log.error((record ? this.launcher.name(record.slot, worker) : 'a worker') + ' failed to start: ' + line)
  }

  // The status page shows every slot; one whose worker is down or still
  // booting is listed as not answering.
  targets () {
    return this.slots.map((slot) => {
      const ready = isReady.call(this, slot)
      return { slot: this.launcher.label(slot), pid: ready ? slot.worker.process.pid : null, peer: ready ? this.records.get(slot.worker).peer : null }
    })
  }

  onLoad (msg, worker) {
    const record = this.records.get(worker)
    if (record !== undefined && !record.retiring) this.fairShare.report(worker, msg.connections)
  }

  onExit (worker, code, signal) {
    const record = this.records.get(worker)
    this.records.delete(worker)
    this.fairShare.forget(worker)
    if (record === undefined) return
    const { slot } = record
    const how = signal ? 'signal ' + signal : 'code ' + code
    if (this.phase === 'stopping') {
      if (this.records.size === 0) this.finishStop()
      return
    }
    if (record.retiring) {
      this.log.info(this.launcher.name(slot, worker) + ' (pid ' + worker.process.pid + ') retired')
      return
    }
    if (record.waiter !== null) {
      const err = new Error('new worker exited with ' + how + ' before it was ready')
      err.signal = signal
      record.waiter.reject(err)
      return
    }
    if (this.phase === 'booting') {
      this.fatal(svrError('SVR_ERR_WORKER_BOOT', [this.launcher.name(slot, worker) + ' exited with ' + how + ' before it was ready']))
      return
    }
    if (slot.worker === worker) this.scheduleReplacement(slot, record, how)
  }

  // Only an exit before the worker was ready, or within crashLoopWindow
  // after, counts towards the slot's crash loop and waits for the back-off;
  // a worker that served longer proved the slot healthy, and is replaced at
  // once. And a back-off never leaves every slot empty by choice.
  scheduleReplacement (slot, record, how) {
    slot.worker = null
    const reason = exitReason(record, Date.now(), this.options.config.crashLoopWindow)
    this.counters.countRestart(reason)
    slot.streak = reason === 'served' ? 0 : slot.streak + 1
    let delay = backoffDelay(slot.streak)
    // A worker that never got ready is no loss to the clients: when none
    // can start, starting one after another would only burn the CPU.
    if (delay !== 0 && record.ready && this.slots.every((other) => other.worker === null)) delay = 0
    const when = delay === 0 ? 'now' : 'in ' + delay + ' ms'
    this.log.warn(this.launcher.name(slot, record.worker) + ' exited unexpectedly (' + how + ') ' + EXIT_REASONS[reason] + '; replacing it ' + when)
    if (slot.streak >= CRASH_LOOP_STREAK) {
      this.log.error(svrError('SVR_ERR_WORKER_CRASH_LOOP', [slot.id, slot.streak]).message +
        '; next attempt ' + when + ', check the errors above')
    }
    this.scheduleFork(slot, delay)
  }

  scheduleFork (slot, delay) {
    slot.timer = setTimeout(() => {
      slot.timer = null
      slot.replacing = true
      // The options this slot last ran: during a rolling reload a slot
      // already moved to the new configuration must not fall back.
      slot.worker = this.fork(slot, slot.options || this.options)
    }, delay)
  }

  reload () {
    return this.reloads.request()
  }

  stop (signal) {
    if (this.phase === 'stopping') {
      if (signal === 'SIGINT') this.force('second SIGINT')
      return
    }
    this.phase = 'stopping'
    this.log.info('shutting down on ' + signal + ': draining ' + this.records.size + ' worker(s)')
    // The workers hold their own descriptors while they still accept.
    this.sockets.close()
    for (const slot of this.slots) clearTimeout(slot.timer)
    for (const [worker, record] of this.records) {
      if (record.waiter !== null) record.waiter.reject(new Error('server is stopping'))
      record.retiring = true
      this.fairShare.forget(worker)
      worker.send(message('shutdown', { delay: this.options.config.shutdownDelay }))
    }
    if (this.records.size === 0) {
      this.finishStop()
      return
    }
    const { shutdownDelay, shutdownTimeout: timeout } = this.options.config
    this.forceTimer = setTimeout(() => {
      this.log.error(svrError('SVR_ERR_SHUTDOWN_TIMEOUT', [timeout]).message)
      this.force('shutdownTimeout')
    }, shutdownDelay + timeout)
  }

  // SIGUSR1, after logrotate has renamed the files: the primary's own
  // error.log, and every worker's.
  reopenLogs () {
    this.logs.reopenOnSignal(this.log)
    this.broadcast(message('reopen-logs'))
  }

  setBlocked (entries) {
    this.blocked = entries
    // Every worker, also one still booting (its boot message had the old list).
    this.broadcast(message('blocklist', { entries }))
  }

  /**
   * Console close/open. Closed, the primary lets go of its sockets too, so
   * that new clients are refused rather than left waiting in the backlog.
   * Opening binds them again and settles once every worker listens on them:
   * a bound socket that nobody listens on refuses connections.
   * @param {boolean} open
   * @returns {Promise<string|null>} why the server could not be opened
   */
  async setAccepting (open) {
    if (!open) {
      this.accepting = false
      this.sockets.close()
      this.broadcast(message('accepting', { open }))
      return null
    }
    if (this.accepting) return null
    try {
      this.sockets.reopen()
    } catch (err) {
      return listenError(err).message
    }
    this.accepting = true
    const listening = []
    for (const [worker, record] of this.records) {
      if (record.retiring || !worker.isConnected()) continue
      record.hasSockets = this.sendSockets(worker, record.options)
      // A worker that does not answer in time is past helping; the others are open.
      listening.push(record.peer.request('accepting', { open }, { timeout: ACCEPTING_TIMEOUT_MS }).catch(() => {}))
    }
    await Promise.all(listening)
    return null
  }

  /**
   * Ask every worker that serves (not one retiring or still booting).
   * @param {string} act
   * @param {object} fields
   * @param {number} timeout ms per worker
   * @returns {Promise<Array<{label: string, value?: *, error?: Error}>>} one answer per worker
   */
  askServing (act, fields, timeout) {
    const asked = []
    for (const [worker, record] of this.records) {
      if (record.retiring || !record.ready || !worker.isConnected()) continue
      const label = this.launcher.name(record.slot, worker)
      asked.push(record.peer.request(act, fields, { timeout }).then((value) => ({ label, value }), (error) => ({ label, error })))
    }
    return Promise.all(asked)
  }

  broadcast (msg) {
    for (const worker of this.records.keys()) {
      if (worker.isConnected()) worker.send(msg)
    }
  }

  force (why) {
    for (const worker of this.records.keys()) worker.process.kill('SIGKILL')
    this.log.error('stopped by force (' + why + ')')
    process.exit(1)
  }

  finishStop () {
    clearTimeout(this.forceTimer)
    this.log.info('stopped')
    process.exit(0)
  }

  fatal (err) {
    if (this.phase === 'stopping') return
    this.phase = 'stopping'
    this.log.error(err.message)
    for (const worker of this.records.keys()) worker.process.kill('SIGKILL')
    process.exit(1)
  }
}

function isReady (slot) {
  const record = slot.worker === null ? undefined : this.records.get(slot.worker)
  return record !== undefined && record.ready
}

module.exports = { Supervisor }
