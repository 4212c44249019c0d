'use strict'

const cluster = require('node:cluster')
const { workerCount } = require('../config/worker-count')
const { workerEnvironment } = require('../application/process-environment')

// With the shared accept queue (SCHED_NONE, see setup), libuv accepts
// every pending connection in one go, so a burst of keep-alive connections
// can all land on one worker while another idles. Single accept makes a
// worker yield after each one, so the others take their share.
const SCHEDULING_ENV = Object.freeze({ UV_TCP_SINGLE_ACCEPT: '1' })

/**
 * How the Supervisor starts the workers of a cluster: one process each,
 * forked from svr.js (lib/worker/worker.js runs there). The in-process
 * counterpart is lib/primary/in-process-launcher.js.
 */
class ClusterLauncher {
  constructor () {
    // Workers share the listening socket and accept from the kernel queue
    // themselves. With round-robin the primary accepts and hands each
    // connection over IPC; one handed to a worker that has just died is never
    // answered nor closed, so its client hangs. A shared queue also leaves
    // unaccepted connections to the surviving workers and saves a hop per
    // connection.
    cluster.schedulingPolicy = cluster.SCHED_NONE
    cluster.setupPrimary({ exec: require.resolve('../../svr.js'), args: [] })
  }

  /**
   * @param {{id: number}} slot
   * @param {object} options the runtime options the worker will boot with
   * @returns {import('node:cluster').Worker}
   */
  launch (slot, options) {
    return cluster.fork(workerEnvironment({ ...SCHEDULING_ENV, ...options.config.environmentVariables, SVR_SLOT: String(slot.id) }))
  }

  /** @returns {number} worker slots for `config` */
  count (config) {
    return workerCount(config)
  }

  /**
   * @param {{id: number}} slot
   * @param {object} [worker] one of the slot's workers
   * @returns {string} the slot's worker in log lines
   */
  name (slot, worker) {
    return 'worker ' + slot.id
  }

  /** @returns {number} the slot's label on the status page and in the metrics */
  label (slot) {
    return slot.id
  }
}

module.exports = { ClusterLauncher, workerCount }
