'use strict'

const { message } = require('../ipc')
const { listenError } = require('../listen')
const { prepareReload } = require('./reload')
const { createSlot, backoffDelay } = require('./slots')

// How long a fresh worker may take to boot and listen during a reload.
const READY_TIMEOUT_MS = 30000

/**
 * A reload (SIGHUP, console `restart`, an edited script): read and check
 * the new configuration, then replace the workers one slot at a time, each
 * new one listening before the old one drains. The same for a cluster and
 * for the in-process worker of --single-threaded.
 * @param {import('./supervisor').Supervisor} supervisor
 * @returns {Promise<void>}
 */
async function applyReload (supervisor) {
  const { log, counters } = supervisor
  log.info('reload requested: reading ' + supervisor.options.configFile)
  // New certificates reach the workers with the rolling replacement below.
  const ready = await prepareReload(supervisor.options, supervisor.args, log)
  if (ready === null) {
    counters.countReload('refused')
    return
  }
  const { options, prepared } = ready
  const { config } = options
  const previousAddresses = supervisor.sockets.addresses(supervisor.options.config)
  try {
    supervisor.sockets.acquire(config)
    await rollWorkers(supervisor, options, supervisor.launcher.count(config))
  } catch (err) {
    prepared.remove()
    supervisor.sockets.release(configsInUse(supervisor))
    const reason = err.listenSpec === undefined ? err.message : listenError(err).message
    log.error('reload failed: ' + reason + '; workers not yet replaced keep the old configuration')
    counters.countReload('failed')
    return
  }
  // Workers still draining loaded the old mods long ago; their files can go
  // once those workers are gone.
  setTimeout(supervisor.prepared.remove, config.shutdownTimeout).unref()
  supervisor.prepared = prepared
  supervisor.options = options
  supervisor.coordinator.configure(options)
  // The retiring workers hold their own descriptors until they stop accepting.
  supervisor.sockets.release(configsInUse(supervisor))
  await supervisor.logs.configure(options, null).catch((err) => log.error('cannot open the log files:', err.message))
  counters.countReload('applied')
  log.info('reload applied: ' + supervisor.slots.length + ' worker(s) running the new configuration')
  if (JSON.stringify(previousAddresses) !== JSON.stringify(supervisor.sockets.addresses(config))) supervisor.announce()
  supervisor.watchScript()
}

// Every configuration a worker may be forked with: a slot's replacement
// runs the one the slot last ran.
function configsInUse (supervisor) {
  const configs = [supervisor.options.config]
  for (const slot of supervisor.slots) if (slot.options !== null) configs.push(slot.options.config)
  return configs
}

// One slot at a time: the fresh worker listens before the old one drains,
// so the server never has fewer workers accepting than before.
async function rollWorkers (supervisor, options, count) {
  const { slots } = supervisor
  for (let i = 0; i < count; i++) {
    if (supervisor.phase !== 'running') throw new Error('server is stopping')
    if (i === slots.length) slots.push(createSlot(i + 1))
    await replaceSlot(supervisor, slots[i], options)
  }
  while (slots.length > count) {
    const slot = slots.pop()
    clearTimeout(slot.timer)
    if (slot.worker !== null) retire(supervisor, slot.worker)
  }
}

async function replaceSlot (supervisor, slot, options) {
  // A pending crash replacement would fork a second worker into this slot.
  clearTimeout(slot.timer)
  slot.timer = null
  // A new worker killed by a signal before it was ready (the OOM killer, a
  // stray kill) is started again, after the slot's back-off like any early
  // exit; one that reports a boot error, or exits by itself, fails the reload.
  let fresh
  while (fresh === undefined) {
    try {
      const started = await startReady(supervisor, slot, options)
      await warmUp(started, options.config.healthReadyDelay)
      fresh = started
    } catch (err) {
      if (typeof err.signal !== 'string' || supervisor.phase !== 'running') {
        if (slot.worker === null && slot.timer === null && supervisor.phase === 'running') supervisor.scheduleFork(slot, backoffDelay(slot.streak))
        throw err
      }
      slot.streak++
      supervisor.counters.countRestart('boot')
      const delay = backoffDelay(slot.streak)
      supervisor.log.warn(supervisor.launcher.name(slot) + ' of the new configuration was killed (' + err.signal + ') before it was ready; starting another ' +
        (delay === 0 ? 'now' : 'in ' + delay + ' ms'))
      if (delay !== 0) await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
  // Whoever serves the slot now (the old worker, or a crash replacement
  // forked while we waited) drains once the fresh worker takes over.
  clearTimeout(slot.timer)
  slot.timer = null
  const old = slot.worker
  slot.worker = fresh
  slot.options = options
  // A new configuration starts the slot's crash count afresh.
  slot.streak = 0
  if (old !== null) retire(supervisor, old)
}

// Fork a worker of `options` into the slot (beside the one serving it)
// and wait until it listens.
async function startReady (supervisor, slot, options) {
  const fresh = supervisor.fork(slot, options)
  const record = supervisor.records.get(fresh)
  const ready = new Promise((resolve, reject) => { record.waiter = { resolve, reject } })
  const timer = setTimeout(() => {
    if (record.waiter !== null) record.waiter.reject(new Error('new worker not ready after ' + READY_TIMEOUT_MS + ' ms'))
  }, READY_TIMEOUT_MS)
  try {
    await ready
  } catch (err) {
    record.retiring = true
    supervisor.fairShare.forget(fresh)
    fresh.process.kill('SIGKILL')
    throw err
  } finally {
    clearTimeout(timer)
  }
  return fresh
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

/**
 * Let a worker drain and exit; kill it if it still has not after shutdownTimeout.
 * @param {import('./supervisor').Supervisor} supervisor
 * @param {object} worker
 */
function retire (supervisor, worker) {
  const record = supervisor.records.get(worker)
  if (record === undefined || record.retiring) return
  record.retiring = true
  supervisor.fairShare.forget(worker)
  worker.send(message('shutdown'))
  const timeout = supervisor.options.config.shutdownTimeout
  setTimeout(() => {
    if (supervisor.records.has(worker)) {
      supervisor.log.warn(supervisor.launcher.name(record.slot, worker) + ' (pid ' + worker.process.pid + ') still draining after ' +
        timeout + ' ms; killing it')
      worker.process.kill('SIGKILL')
    }
  }, timeout).unref()
}

module.exports = { applyReload }
