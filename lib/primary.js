'use strict'

const cluster = require('node:cluster')
const fs = require('node:fs')
const os = require('node:os')
const { message, dispatch, workerPeer } = require('./ipc')
const { Coordinator } = require('./coordinator')
const { svrError } = require('./errors')
const { listeningLines, listenError, removeStaleSockets } = require('./listen')
const { ListenSockets } = require('./listen-sockets')
const { scriptPath } = require('./script/locate')
const { warnForwardingConfig } = require('./access/client-address')
const { countRestart, countReload } = require('./metrics/primary')
const { BlockState } = require('./console/block-state')
const { startConsole } = require('./console')
const { primaryActions } = require('./console/actions')
const { FairShare } = require('./balance/primary')
const { prepareReload, ReloadQueue } = require('./reload')
const { workerEnvironment } = require('./application-environment')

// The delay before replacing a worker that exited within crashLoopWindow
// (or before it was ready): none for the first such exit, as one early death
// is no loop yet; then it starts here and doubles with every such exit in a
// row, up to the maximum.
const BACKOFF_START_MS = 100
const BACKOFF_MAX_MS = 30000
const CRASH_LOOP_STREAK = 5
// How long a fresh worker may take to boot and listen during a reload.
const READY_TIMEOUT_MS = 30000
const SCRIPT_WATCH_MS = 500

function workerCount (config) {
  return config.workers === 'auto' ? os.availableParallelism() : config.workers
}

/**
 * The cluster primary: forks one worker per slot, replaces crashed ones
 * with per-slot exponential back-off, rolls workers over on SIGHUP and
 * drains them on SIGTERM/SIGINT. It never serves requests itself.
 */
class Supervisor {
  constructor (options, args, { log, logs }, prepared) {
    this.options = options
    // The primary's own log files (its error.log).
    this.logs = logs
    this.prepared = prepared
    this.watcher = null
    this.args = args
    this.log = log
    this.phase = 'booting'
    this.slots = []
    this.records = new Map()
    this.reloads = new ReloadQueue(() => this.applyReload(), () => this.phase === 'running' ? null : this.phase, log)
    this.sockets = new ListenSockets()
    // The names (and versions) of the mods and script the workers run.
    this.mods = null
    this.forceTimer = null
    this.fairShare = new FairShare((worker, share) => {
      if (worker.isConnected()) worker.send(message('fair-share', { connections: share }))
    })
    // The cluster-wide services (login throttle, status page, metrics).
    this.coordinator = new Coordinator(log, () => this.targets())
    // Console state every worker, including ones forked later, must share.
    this.blocked = []
    this.accepting = true
    this.handlers = {
      ...this.coordinator.table,
      listening: (msg, peer, worker) => this.onListening(msg, worker),
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
    const count = workerCount(config)
    this.log.info('svr starting: ' + count + ' worker(s), config ' + this.options.configFile +
      ', webroot ' + config.wwwroot)
    for (let id = 1; id <= count; id++) {
      const slot = createSlot(id)
      this.slots.push(slot)
      slot.worker = this.fork(slot, this.options)
    }
  }

  fork (slot, options) {
    const env = workerEnvironment({ ...SCHEDULING_ENV, ...options.config.environmentVariables, SVR_SLOT: String(slot.id) })
    const worker = cluster.fork(env)
    const peer = workerPeer(worker)
    const record = { slot, options, peer, ready: false, readyAt: 0, retiring: false, waiter: null, hasSockets: false }
    this.records.set(worker, record)
    worker.on('message', (msg) => dispatch(this.handlers, msg, peer, worker))
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal))
    worker.on('error', (err) => this.log.warn('worker ' + slot.id + ' channel error:', err.message))
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
    this.log.info('worker ' + slot.id + ' up (pid ' + worker.process.pid + ')')
    // The console closed or opened the server while this worker booted.
    if (!this.accepting) {
      worker.send(message('accepting', { open: false }))
    } else if (!record.hasSockets) {
      record.hasSockets = this.sendSockets(worker, record.options)
      worker.send(message('accepting', { open: true }))
    }
    this.mods = msg.mods
    if (record.waiter !== null) {
      record.waiter.resolve()
      record.waiter = null
    } else if (slot.replacing) {
      slot.replacing = false
      this.log.info('worker ' + slot.id + ' replaced')
    }
    if (this.phase === 'booting' && this.slots.every(isReady, this)) {
      this.phase = 'running'
      this.announce()
    }
  }

  announce () {
    if (this.mods && this.mods.length !== 0) this.log.info('application code: ' + this.mods.join(', '))
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
    this.log.error('worker ' + (record ? record.slot.id : '?') + ' failed to start: ' + line)
  }

  // The status page shows every slot; one whose worker is down or still
  // booting is listed as not answering.
  targets () {
    return this.slots.map((slot) => {
      const ready = isReady.call(this, slot)
      return { slot: slot.id, pid: ready ? slot.worker.process.pid : null, peer: ready ? this.records.get(slot.worker).peer : null }
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
      this.log.info('worker ' + slot.id + ' (pid ' + worker.process.pid + ') retired')
      return
    }
    if (record.waiter !== null) {
      const err = new Error('new worker exited with ' + how + ' before it was ready')
      err.signal = signal
      record.waiter.reject(err)
      return
    }
    if (this.phase === 'booting') {
      this.fatal(svrError('SVR_ERR_WORKER_BOOT', ['worker ' + slot.id + ' exited with ' + how + ' before it was ready']))
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
    countRestart(reason)
    slot.streak = reason === 'served' ? 0 : slot.streak + 1
    let delay = backoffDelay(slot.streak)
    // A worker that never got ready is no loss to the clients: when none
    // can start, starting one after another would only burn the CPU.
    if (delay !== 0 && record.ready && this.slots.every((other) => other.worker === null)) delay = 0
    const when = delay === 0 ? 'now' : 'in ' + delay + ' ms'
    this.log.warn('worker ' + slot.id + ' exited unexpectedly (' + how + ') ' + EXIT_REASONS[reason] + '; replacing it ' + when)
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

  async applyReload () {
    this.log.info('reload requested: reading ' + this.options.configFile)
    // New certificates reach the workers with the rolling replacement below.
    const ready = await prepareReload(this.options, this.args, this.log)
    if (ready === null) return
    const { options, prepared } = ready
    const { config } = options
    const previousAddresses = this.sockets.addresses(this.options.config)
    try {
      this.sockets.acquire(config)
      await this.rollWorkers(options, workerCount(config))
    } catch (err) {
      prepared.remove()
      this.sockets.release(this.configsInUse())
      const reason = err.listenSpec === undefined ? err.message : listenError(err).message
      this.log.error('reload failed: ' + reason + '; workers not yet replaced keep the old configuration')
      countReload('failed')
      return
    }
    // Workers still draining loaded the old mods long ago; their files can go
    // once those workers are gone.
    setTimeout(this.prepared.remove, config.shutdownTimeout).unref()
    this.prepared = prepared
    this.options = options
    this.coordinator.configure(options)
    // The retiring workers hold their own descriptors until they stop accepting.
    this.sockets.release(this.configsInUse())
    await this.logs.configure(options, null).catch((err) => this.log.error('cannot open the log files:', err.message))
    countReload('applied')
    this.log.info('reload applied: ' + this.slots.length + ' worker(s) running the new configuration')
    if (JSON.stringify(previousAddresses) !== JSON.stringify(this.sockets.addresses(config))) this.announce()
    this.watchScript()
  }

  // Every configuration a worker may be forked with: a slot's replacement
  // runs the one the slot last ran.
  configsInUse () {
    const configs = [this.options.config]
    for (const slot of this.slots) if (slot.options !== null) configs.push(slot.options.config)
    return configs
  }

  // One slot at a time: the fresh worker listens before the old one drains,
  // so the cluster never has fewer workers accepting than before.
  async rollWorkers (options, count) {
    for (let i = 0; i < count; i++) {
      if (this.phase !== 'running') throw new Error('server is stopping')
      if (i === this.slots.length) this.slots.push(createSlot(i + 1))
      await this.replaceSlot(this.slots[i], options)
    }
    while (this.slots.length > count) {
      const slot = this.slots.pop()
      clearTimeout(slot.timer)
      if (slot.worker !== null) this.retire(slot.worker)
    }
  }

  async replaceSlot (slot, options) {
    // A pending crash replacement would fork a second worker into this slot.
    clearTimeout(slot.timer)
    slot.timer = null
    // A new worker killed by a signal before it was ready (the OOM killer, a
    // stray kill) is started again, after the slot's back-off like any early
    // exit; one that reports a boot error, or exits by itself, fails the reload.
    let fresh
    while (fresh === undefined) {
      try {
        fresh = await this.startReady(slot, options)
      } catch (err) {
        if (typeof err.signal !== 'string' || this.phase !== 'running') {
          if (slot.worker === null && slot.timer === null && this.phase === 'running') this.scheduleFork(slot, backoffDelay(slot.streak))
          throw err
        }
        slot.streak++
        countRestart('boot')
        const delay = backoffDelay(slot.streak)
        this.log.warn('worker ' + slot.id + ' of the new configuration was killed (' + err.signal + ') before it was ready; starting another ' +
          (delay === 0 ? 'now' : 'in ' + delay + ' ms'))
        if (delay !== 0) await new Promise((resolve) => setTimeout(resolve, delay))
      }
    }
    // A slow-starting application gets its warm-up while the old worker
    // still serves, so a reload never leaves the slot unready.
    const warmUp = options.config.healthReadyDelay
    if (warmUp > 0) await new Promise((resolve) => setTimeout(resolve, warmUp))
    // Whoever serves the slot now (the old worker, or a crash replacement
    // forked while we waited) drains once the fresh worker takes over.
    clearTimeout(slot.timer)
    slot.timer = null
    const old = slot.worker
    slot.worker = fresh
    slot.options = options
    // A new configuration starts the slot's crash count afresh.
    slot.streak = 0
    if (old !== null) this.retire(old)
  }

  // Fork a worker of `options` into the slot (beside the one serving it)
  // and wait until it listens.
  async startReady (slot, options) {
    const fresh = this.fork(slot, options)
    const record = this.records.get(fresh)
    const ready = new Promise((resolve, reject) => { record.waiter = { resolve, reject } })
    const timer = setTimeout(() => {
      if (record.waiter !== null) record.waiter.reject(new Error('new worker not ready after ' + READY_TIMEOUT_MS + ' ms'))
    }, READY_TIMEOUT_MS)
    try {
      await ready
    } catch (err) {
      record.retiring = true
      this.fairShare.forget(fresh)
      fresh.process.kill('SIGKILL')
      throw err
    } finally {
      clearTimeout(timer)
    }
    return fresh
  }

  retire (worker) {
    const record = this.records.get(worker)
    if (record === undefined || record.retiring) return
    record.retiring = true
    this.fairShare.forget(worker)
    worker.send(message('shutdown'))
    const timeout = this.options.config.shutdownTimeout
    setTimeout(() => {
      if (this.records.has(worker)) {
        this.log.warn('worker ' + record.slot.id + ' (pid ' + worker.process.pid + ') still draining after ' +
          timeout + ' ms; killing it')
        worker.process.kill('SIGKILL')
      }
    }, timeout).unref()
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
   * @param {boolean} open
   * @returns {string|null} why the server could not be opened
   */
  setAccepting (open) {
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
    for (const [worker, record] of this.records) {
      if (record.retiring || !worker.isConnected()) continue
      record.hasSockets = this.sendSockets(worker, record.options)
      worker.send(message('accepting', { open }))
    }
    return null
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

function createSlot (id) {
  return { id, worker: null, options: null, streak: 0, timer: null, replacing: false }
}

const EXIT_REASONS = {
  boot: 'before it was ready',
  early: 'within crashLoopWindow of getting ready',
  served: 'after serving longer than crashLoopWindow'
}

/**
 * @param {{ready: boolean, readyAt: number}} record the worker that exited
 * @param {number} now ms
 * @param {number} window the config's crashLoopWindow, ms
 * @returns {'boot'|'early'|'served'} the metrics label of the restart
 */
function exitReason (record, now, window) {
  if (!record.ready) return 'boot'
  return now - record.readyAt < window ? 'early' : 'served'
}

/**
 * @param {number} streak exits in a row that counted towards the slot's crash loop
 * @returns {number} ms to wait before forking the slot's next worker
 */
function backoffDelay (streak) {
  if (streak <= 1) return 0
  return Math.min(BACKOFF_START_MS * 2 ** (streak - 2), BACKOFF_MAX_MS)
}

function isReady (slot) {
  const record = slot.worker === null ? undefined : this.records.get(slot.worker)
  return record !== undefined && record.ready
}

// With the shared accept queue (SCHED_NONE, see runPrimary), libuv accepts
// every pending connection in one go, so a burst of keep-alive connections
// can all land on one worker while another idles. Single accept makes a
// worker yield after each one, so the others take their share.
const SCHEDULING_ENV = Object.freeze({ UV_TCP_SINGLE_ACCEPT: '1' })

/**
 * @param {object} options runtime options with the validated config
 * @param {object} args parsed command line
 * @param {{log: object, logs: import('./logging').LogFiles}} output the primary's logger and its log files
 * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
 */
async function runPrimary (options, args, output, prepared) {
  const { log } = output
  // Workers share the listening socket and accept from the kernel queue
  // themselves. With round-robin the primary accepts and hands each
  // connection over IPC; one handed to a worker that has just died is never
  // answered nor closed, so its client hangs. A shared queue also leaves
  // unaccepted connections to the surviving workers and saves a hop per
  // connection.
  cluster.schedulingPolicy = cluster.SCHED_NONE
  cluster.setupPrimary({ exec: require.resolve('../svr.js'), args: [] })
  const supervisor = new Supervisor(options, args, output, prepared)
  process.on('SIGTERM', () => supervisor.stop('SIGTERM'))
  process.on('SIGINT', () => supervisor.stop('SIGINT'))
  process.on('SIGHUP', () => { supervisor.reload() })
  process.on('SIGUSR1', () => supervisor.reopenLogs())
  const blocks = new BlockState(options, (entries) => supervisor.setBlocked(entries), log)
  supervisor.blocked = (await blocks.load()).slice()
  await supervisor.start()
  startConsole(primaryActions(supervisor, blocks))
  return supervisor
}

module.exports = { runPrimary, workerCount }
