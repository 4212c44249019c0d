'use strict'

const { Coordinator } = require('./coordinator')
const { svrError } = require('../errors')
const { listeningLines, listenError, removeStaleSockets } = require('../listen')
const { ListenSockets } = require('./listen-sockets')
const { ConnectionDispatches } = require('./connection-dispatch')
const { scriptPath } = require('../application/locate')
const { warnForwardingConfig } = require('../access/client-address')
const { PrimaryCounters } = require('../metrics/primary')
const { WorkerLoads } = require('../balance/primary')
const { ReloadQueue } = require('./reload')
const { createSlot } = require('./slots')
const { workerSlots } = require('./worker-slots')
const { rollingReload } = require('./rolling-reload')
const { operatorControls } = require('./operator-controls')
const { shutdown } = require('./shutdown')
const { ScriptWatcher } = require('./script-watcher')

const SCRIPT_WATCH_MS = 500

/**
 * The primary's logic: binds the listening sockets, starts one worker per
 * slot through its launcher (cluster processes, or the one in-process
 * worker of --single-threaded), replaces crashed ones with per-slot
 * exponential back-off, rolls workers over on a reload and drains them on
 * SIGTERM/SIGINT. It never serves requests itself. It talks to each
 * worker through the worker's Peer (lib/ipc.js) only.
 *
 * The class is written in five files: this one (start, readiness),
 * ./worker-slots.js (forking, replacing and retiring the worker of each
 * slot), ./rolling-reload.js (a reload), ./operator-controls.js (what
 * signals and the console ask of every worker) and ./shutdown.js (stop).
 */
class Supervisor {
  /**
   * @param {object} options runtime options with the validated config
   * @param {object} args parsed command line
   * @param {{log: object, logs: import('../../logging').LogFiles}} output the primary's logger and its log files
   * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
   * @param {import('../cluster-launcher').ClusterLauncher|import('../in-process-launcher').InProcessLauncher} launcher
   *   how workers are started, counted and named
   */
  constructor (options, args, { log, logs }, prepared, launcher) {
    this.options = options
    // The primary's own log files (its error.log).
    this.logs = logs
    this.prepared = prepared
    this.watcher = null
    // The fleet's TLS session ticket keys, once the store gave them.
    this.fleetTicketKeys = null
    this.args = args
    this.log = log
    this.launcher = launcher
    // Restarts and reloads, which the coordinator reports.
    this.counters = new PrimaryCounters()
    this.phase = 'booting'
    this.slots = []
    this.records = new Map()
    this.reloads = new ReloadQueue(() => this.applyReload(), () => this.phase === 'running' ? null : this.phase, log)
    // Cluster workers share each listening socket, and the primary hands a
    // connection one of them passes on to another (lib/primary/connection-dispatch.js);
    // an in-process worker listens on a port of the socket's feed instead.
    this.dispatches = launcher.handsConnections ? new ConnectionDispatches(log) : null
    // worker -> its WorkerIntake, from its fork until its channel has closed.
    this.intakes = new Map()
    this.sockets = new ListenSockets((handle) => { if (this.dispatches !== null) this.dispatches.closed(handle) })
    // What the workers report of the application code they run: the names
    // (and versions) of the mods and script, and the console commands of
    // their 4.x mods ({name, mods}).
    this.code = { mods: [], commands: [] }
    this.forceTimer = null
    // Set once the stop is over and the process about to exit.
    this.finished = false
    this.loads = new WorkerLoads((worker, act, fields) => {
      const record = this.records.get(worker)
      if (record !== undefined) record.peer.notify(act, fields)
    })
    // The cluster-wide services (login throttle, status page, metrics).
    this.coordinator = new Coordinator(log, () => this.targets(), this.counters, (act, fields) => this.broadcast(act, fields))
    // Console state every worker, including ones forked later, must share.
    this.blocked = []
    this.accepting = true
    this.handlers = {
      ...this.coordinator.table,
      listening: (msg, peer, worker) => this.onListening(msg, worker),
      'boot-error': (msg, peer, worker) => this.onBootError(msg, worker),
      load: (msg, peer, worker) => this.onLoad(msg, worker),
      'conn-taken': (msg, peer, worker) => this.intakeOf(worker)?.acknowledged(msg),
      // A worker's server listens on a shared socket, or stopped: a retiring
      // worker is handed no connections, even if it listens again.
      'port-open': (msg, peer, worker) => this.portChanged(worker, msg.role, true),
      'port-closed': (msg, peer, worker) => this.portChanged(worker, msg.role, false),
      'conn-pass': (msg, peer, worker, client) => this.onPass(worker, msg.role, client)
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

  onListening (msg, worker) {
    // Automatic HTTPS orders only once a port answers the CA's validation.
    this.coordinator.acme.workerListening()
    const record = this.records.get(worker)
    if (record === undefined) return
    record.ready = true
    record.readyAt = Date.now()
    const { slot } = record
    this.log.info(this.launcher.name(slot, worker) + ' up (pid ' + worker.process.pid + ')')
    if (this.fleetTicketKeys !== null) record.peer.notify('ticket-keys', { keys: this.fleetTicketKeys })
    // The sessions stored before it came, which it may be asked to resume.
    record.peer.notify('tls-sessions-known', { sessions: this.coordinator.tlsSessions.ids() })
    // The console closed or opened the server while this worker booted.
    if (!this.accepting) {
      record.peer.notify('accepting', { open: false })
    } else if (!record.hasSockets) {
      record.hasSockets = this.sendSockets(record)
      record.peer.notify('accepting', { open: true })
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
      this.watcher.stop()
      this.watcher = null
    }
    if (!wanted || this.watcher !== null) return
    this.watcher = new ScriptWatcher(file, SCRIPT_WATCH_MS, () => {
      this.log.info(file + ' changed; reloading')
      this.reload()
    })
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

  /** @returns {import('./worker-intake').WorkerIntake|undefined} */
  intakeOf (worker) {
    return this.intakes.get(worker)
  }

  // A worker passed on a connection it accepted, holding more than its part.
  onPass (worker, role, client) {
    if (client === undefined || client === null) return
    // A raw TCP or Pipe handle; anything else (a net.Socket some code sent
    // with a message of ours) is not a connection to hand on.
    if (typeof client.close !== 'function') {
      if (typeof client.destroy === 'function') client.destroy()
      return
    }
    const intake = this.intakeOf(worker)
    const dispatch = intake?.sockets.get(role)
    if (dispatch === undefined) {
      // No socket of that role was sent to this worker.
      client.close()
      return
    }
    dispatch.pass(client, intake)
  }

  onLoad (msg, worker) {
    const record = this.records.get(worker)
    if (record !== undefined && !record.retiring) this.loads.report(worker, msg)
  }

  reload () {
    return this.reloads.request()
  }

  /**
   * TLS session ticket keys for every worker, the running ones and those
   * started later (the fleet's, lib/tls/fleet-ticket-keys.js). Kept here
   * rather than in the options a worker is started with: a reload reads
   * its options before it forks, and keys that arrive in between would be
   * lost for the workers it starts. Every worker gets them when it
   * listens, before it is given connections (onListening).
   * @param {string} keys base64
   */
  useTicketKeys (keys) {
    this.fleetTicketKeys = keys
    this.broadcast('ticket-keys', { keys })
  }
}

function isReady (slot) {
  const record = slot.worker === null ? undefined : this.records.get(slot.worker)
  return record !== undefined && record.ready
}

Object.assign(Supervisor.prototype, workerSlots, rollingReload, operatorControls, shutdown)

module.exports = { Supervisor }
