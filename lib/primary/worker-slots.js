'use strict'

const { dispatch, workerPeer } = require('../ipc')
const { svrError } = require('../errors')
const { WorkerIntake } = require('./worker-intake')
const { exitReason, backoffDelay, EXIT_REASONS, CRASH_LOOP_STREAK } = require('./slots')

// How long a fresh worker may take to boot and listen during a reload.
const READY_TIMEOUT_MS = 30000

/**
 * Methods of the Supervisor (./supervisor.js) that start, replace and retire the
 * worker of each slot. A worker's record holds its Peer, the options it was
 * started with and where it stands (ready, retiring, awaited by a reload).
 */
const workerSlots = {
  fork (slot, options) {
    const worker = this.launcher.launch(slot, options)
    const peer = workerPeer(worker)
    // openPorts: roles of the shared sockets the worker accepts on (its
    // port-open and port-closed reports); onClosed: who waits for it to
    // accept on none (stoppedAccepting).
    const record = {
      slot, worker, options, peer, ready: false, readyAt: 0, retiring: false, waiter: null, hasSockets: false,
      openPorts: new Set(), onClosed: []
    }
    this.records.set(worker, record)
    worker.on('message', (msg, handle) => dispatch(this.handlers, msg, peer, worker, handle))
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal))
    worker.on('error', (err) => this.log.warn(this.launcher.name(slot, worker) + ' channel error:', err.message))
    // The connections the primary hands the worker (ones the others passed on).
    if (this.dispatches !== null) {
      const intake = new WorkerIntake(peer)
      this.intakes.set(worker, intake)
      handBackOnLoss(worker, intake, () => this.intakes.delete(worker))
    }
    // The sockets go first: the worker listens on them as soon as it has booted.
    record.hasSockets = this.sendSockets(record)
    peer.notify('boot', { options, blocked: this.blocked })
    return worker
  },

  /**
   * @returns {boolean} whether there were sockets to send (none while the console has closed the server)
   */
  sendSockets (record) {
    const intake = this.intakes.get(record.worker)
    const handles = this.sockets.handles(record.options.config)
    for (const { role, handle } of handles) {
      if (intake !== undefined) intake.assign(role, this.dispatches.of(handle))
      record.peer.notify('listen', { role, shared: intake !== undefined }, handle)
    }
    return handles.length !== 0
  },

  onExit (worker, code, signal) {
    const record = this.records.get(worker)
    this.records.delete(worker)
    this.loads.forget(worker)
    if (record === undefined) return
    // Whoever waits for it to stop accepting: it has.
    settleClosed(record)
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
  },

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
  },

  scheduleFork (slot, delay) {
    slot.timer = setTimeout(() => {
      slot.timer = null
      slot.replacing = true
      // The options this slot last ran: during a rolling reload a slot
      // already moved to the new configuration must not fall back.
      slot.worker = this.fork(slot, slot.options || this.options)
    }, delay)
  },

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
      this.loads.forget(fresh)
      fresh.process.kill('SIGKILL')
      throw err
    } finally {
      clearTimeout(timer)
    }
    return fresh
  },

  /**
   * Let a worker drain and exit; kill it if it still has not after shutdownTimeout.
   * @param {object} worker
   * @returns {Promise<void>} settles once the worker accepts no more
   *   connections: its shared sockets closed, or it exited. Until it has read
   *   the shutdown message it accepts from the shared queues like any other
   *   worker, which takes long when its event loop is busy.
   */
  retire (worker) {
    const record = this.records.get(worker)
    if (record === undefined) return Promise.resolve()
    if (!record.retiring) startRetiring(this, worker, record)
    return stoppedAccepting(record)
  },

  /**
   * A worker's shared socket of `role` now accepts (open) or no longer does.
   * @param {object} worker
   * @param {string} role
   * @param {boolean} open
   */
  portChanged (worker, role, open) {
    const record = this.records.get(worker)
    if (record === undefined) return
    if (open) {
      record.openPorts.add(role)
    } else {
      record.openPorts.delete(role)
      if (record.openPorts.size === 0) settleClosed(record)
    }
    this.intakeOf(worker)?.listening(role, open && !record.retiring)
  }
}

function startRetiring (supervisor, worker, record) {
  record.retiring = true
  supervisor.loads.forget(worker)
  supervisor.intakeOf(worker)?.leave()
  record.peer.notify('shutdown')
  const timeout = supervisor.options.config.shutdownTimeout
  setTimeout(() => {
    if (supervisor.records.has(worker)) {
      supervisor.log.warn(supervisor.launcher.name(record.slot, worker) + ' (pid ' + worker.process.pid + ') still draining after ' +
        timeout + ' ms; killing it')
      worker.process.kill('SIGKILL')
    }
  }, timeout).unref()
}

// An in-process worker reports no ports: the feed hands connections to the
// newest listening server only, so a retiring one is handed none.
function stoppedAccepting (record) {
  if (record.openPorts.size === 0) return Promise.resolve()
  return new Promise((resolve) => record.onClosed.push(resolve))
}

function settleClosed (record) {
  const waiting = record.onClosed
  record.onClosed = []
  for (const resolve of waiting) resolve()
}

// How long after a worker's exit its channel may still be open: the
// connections it had not acknowledged are handed on by then at the latest.
const LOSS_FALLBACK_MS = 1000

// A worker's unacknowledged connections go to the others once its channel
// has closed, when every acknowledgement it sent before dying has been read:
// handing on one it took would give its client a worker waiting for bytes
// the dead one read. Until then its intake answers what it sent (an
// acknowledgement, a connection passed on), though its exit came first.
function handBackOnLoss (worker, intake, forget) {
  const gone = () => {
    intake.lost()
    forget()
  }
  worker.once('disconnect', gone)
  worker.once('exit', () => setTimeout(gone, LOSS_FALLBACK_MS).unref())
}

/**
 * A slow-starting application gets its warm-up while the old worker still
 * serves, so a reload never leaves the slot unready. A new worker that dies
 * meanwhile never took the slot over, and the Supervisor does not replace
 * it: it counts as one that died before it was ready.
 * @param {object} worker the new worker, listening
 * @param {number} ms the configuration's healthReadyDelay
 * @returns {Promise<void>} rejects, with the exit's `signal`, when the worker exits first
 */
function warmUp (worker, ms) {
  if (ms === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => {
      clearTimeout(timer)
      const err = new Error('new worker exited with ' + (signal ? 'signal ' + signal : 'code ' + code) + ' during its warm-up')
      err.signal = signal
      reject(err)
    }
    const timer = setTimeout(() => {
      worker.removeListener('exit', onExit)
      resolve()
    }, ms)
    worker.once('exit', onExit)
  })
}

module.exports = { workerSlots, warmUp, handBackOnLoss }
