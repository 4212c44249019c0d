'use strict'

const { svrError } = require('../errors')

// How long a stopping primary waits for ACME order locks being removed.
const RELEASE_WAIT_MS = 2000

/**
 * Methods of the Supervisor (./supervisor.js) that stop it: drain the
 * workers on SIGTERM/SIGINT, force them after shutdownTimeout, and leave on
 * a fatal error.
 */
const shutdown = {
  stop (signal) {
    if (this.phase === 'stopping') {
      if (signal === 'SIGINT') this.force('second SIGINT')
      return
    }
    this.phase = 'stopping'
    this.log.info('shutting down on ' + signal + ': draining ' + this.records.size + ' worker(s)')
    this.closeSocketsWhenDrained()
    for (const slot of this.slots) clearTimeout(slot.timer)
    for (const [worker, record] of this.records) {
      if (record.waiter !== null) record.waiter.reject(new Error('server is stopping'))
      record.retiring = true
      this.loads.forget(worker)
      record.peer.notify('shutdown', { delay: this.options.config.shutdownDelay })
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
  },

  // Workers go on accepting for shutdownDelay (a load balancer's health
  // check sees them draining meanwhile), on their own descriptors of the
  // sockets. A connection a worker passed on just before it was told to
  // stop still reaches the primary meanwhile, and goes to another worker or
  // back to it: the dispatch of its socket lives as long as the primary's
  // descriptor, and one passed on after that is closed.
  closeSocketsWhenDrained () {
    const { shutdownDelay } = this.options.config
    if (this.dispatches === null || shutdownDelay === 0) {
      this.sockets.close()
      return
    }
    setTimeout(() => this.sockets.close(), shutdownDelay).unref()
  },

  force (why) {
    for (const worker of this.records.keys()) worker.process.kill('SIGKILL')
    this.log.error('stopped by force (' + why + ')')
    process.exit(1)
  },

  finishStop () {
    if (this.finished) return
    this.finished = true
    clearTimeout(this.forceTimer)
    // An ACME order lock being removed (its certificate just stored) goes
    // first: left behind, it would hold every renewal of the name, here
    // after a restart and on the other instances, until it expires.
    const wait = new Promise((resolve) => setTimeout(resolve, RELEASE_WAIT_MS))
    Promise.race([this.coordinator.acme.settled(), wait]).then(() => {
      this.log.info('stopped')
      process.exit(0)
    })
  },

  fatal (err) {
    if (this.phase === 'stopping') return
    this.phase = 'stopping'
    this.log.error(err.message)
    for (const worker of this.records.keys()) worker.process.kill('SIGKILL')
    process.exit(1)
  }
}

module.exports = { shutdown }
