'use strict'

const { listenError } = require('../listen')
const { prepareReload } = require('./reload')
const { createSlot, backoffDelay } = require('./slots')
const { warmUp } = require('./worker-slots')

/**
 * Methods of the Supervisor (./supervisor.js) for a reload (SIGHUP, console
 * `restart`, an edited script): read and check the new configuration, then
 * replace the workers one slot at a time, each new one listening before the
 * old one drains. The same for a cluster and for the in-process worker of
 * --single-threaded.
 */
const rollingReload = {
  /**
   * @returns {Promise<void>}
   */
  async applyReload () {
    const { log, counters } = this
    log.info('reload requested: reading ' + this.options.configFile)
    // New certificates reach the workers with the rolling replacement below.
    const ready = await prepareReload(this.options, this.args, log)
    if (ready === null) {
      counters.countReload('refused')
      return
    }
    const { options, prepared } = ready
    const { config } = options
    const previousAddresses = this.sockets.addresses(this.options.config)
    try {
      this.sockets.acquire(config)
      await this.rollWorkers(options, this.launcher.count(config))
    } catch (err) {
      prepared.remove()
      this.sockets.release(this.configsInUse())
      const reason = err.listenSpec === undefined ? err.message : listenError(err).message
      log.error('reload failed: ' + reason + '; workers not yet replaced keep the old configuration')
      counters.countReload('failed')
      return
    }
    // Workers still draining loaded the old mods long ago; their files can go
    // once those workers are gone.
    setTimeout(this.prepared.remove, config.shutdownTimeout).unref()
    this.prepared = prepared
    this.options = options
    // Every slot runs the new configuration: purgeOnReload removes what the
    // old one stored (a fill an old worker finishes while it drains may
    // still land after).
    await this.coordinator.configure(options)
    // The retiring workers hold their own descriptors until they stop accepting.
    this.sockets.release(this.configsInUse())
    await this.logs.configure(options, null).catch((err) => log.error('cannot open the log files:', err.message))
    counters.countReload('applied')
    log.info('reload applied: ' + this.slots.length + ' worker(s) running the new configuration')
    if (JSON.stringify(previousAddresses) !== JSON.stringify(this.sockets.addresses(config))) this.announce()
    this.watchScript()
  },

  // Every configuration a worker may be forked with: a slot's replacement
  // runs the one the slot last ran.
  configsInUse () {
    const configs = [this.options.config]
    for (const slot of this.slots) if (slot.options !== null) configs.push(slot.options.config)
    return configs
  },

  // One slot at a time: the fresh worker listens before the old one drains,
  // so the server never has fewer workers accepting than before. Settles
  // once no old worker accepts any more, so that every connection made
  // after "reload applied" gets the new configuration.
  async rollWorkers (options, count) {
    const { slots } = this
    const retiring = []
    for (let i = 0; i < count; i++) {
      if (this.phase !== 'running') throw new Error('server is stopping')
      if (i === slots.length) slots.push(createSlot(i + 1))
      await this.replaceSlot(slots[i], options, retiring)
    }
    while (slots.length > count) {
      const slot = slots.pop()
      clearTimeout(slot.timer)
      if (slot.worker !== null) retiring.push(this.retire(slot.worker))
    }
    await Promise.all(retiring)
  },

  /**
   * @param {object} slot
   * @param {object} options the new configuration's
   * @param {Promise<void>[]} retiring gets the promise that the slot's old
   *   worker accepts no more connections
   */
  async replaceSlot (slot, options, retiring) {
    // A pending crash replacement would fork a second worker into this slot.
    clearTimeout(slot.timer)
    slot.timer = null
    const fresh = await this.startWarm(slot, options)
    // Whoever serves the slot now (the old worker, or a crash replacement
    // forked while we waited) drains once the fresh worker takes over.
    clearTimeout(slot.timer)
    slot.timer = null
    const old = slot.worker
    slot.worker = fresh
    slot.options = options
    // A new configuration starts the slot's crash count afresh.
    slot.streak = 0
    // Not awaited here: the next slot's worker starts while this one drains.
    if (old !== null) retiring.push(this.retire(old))
  },

  // A new worker killed by a signal before it was ready (the OOM killer, a
  // stray kill) is started again, after the slot's back-off like any early
  // exit; one that reports a boot error, or exits by itself, fails the reload.
  async startWarm (slot, options) {
    for (;;) {
      try {
        const started = await this.startReady(slot, options)
        await warmUp(started, options.config.healthReadyDelay)
        return started
      } catch (err) {
        if (typeof err.signal !== 'string' || this.phase !== 'running') {
          if (slot.worker === null && slot.timer === null && this.phase === 'running') this.scheduleFork(slot, backoffDelay(slot.streak))
          throw err
        }
        slot.streak++
        this.counters.countRestart('boot')
        const delay = backoffDelay(slot.streak)
        this.log.warn(this.launcher.name(slot) + ' of the new configuration was killed (' + err.signal + ') before it was ready; starting another ' +
          (delay === 0 ? 'now' : 'in ' + delay + ' ms'))
        if (delay !== 0) await new Promise((resolve) => setTimeout(resolve, delay))
      }
    }
  }
}

module.exports = { rollingReload }
