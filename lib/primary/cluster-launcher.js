'use strict'

const cluster = require('node:cluster')
const { workerCount } = require('../config/worker-count')
const { workerEnvironment } = require('../application/process-environment')
const { workerExecArgv } = require('./worker-flags')

/**
 * How the Supervisor starts the workers of a cluster: one process each,
 * forked from svr.js (lib/worker/worker.js runs there). The in-process
 * counterpart is lib/primary/in-process-launcher.js.
 */
class ClusterLauncher {
  constructor () {
    // The Supervisor binds the sockets, and its workers accept from their
    // shared queues, passing on what would put one over its part
    // (lib/primary/connection-dispatch.js). With the cluster module's
    // round-robin every connection would cross the primary, and one handed
    // to a worker that has just died is never answered nor closed, so its
    // client hangs. And the cluster module must not bind sockets of its own
    // for a worker's listen().
    cluster.schedulingPolicy = cluster.SCHED_NONE
    this.handsConnections = true
    cluster.setupPrimary({ exec: require.resolve('../../svr.js'), args: [], execArgv: workerExecArgv() })
  }

  /**
   * @param {{id: number}} slot
   * @param {object} options the runtime options the worker will boot with
   * @returns {import('node:cluster').Worker}
   */
  launch (slot, options) {
    return cluster.fork(workerEnvironment({ ...options.config.environmentVariables, SVR_SLOT: String(slot.id) }))
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
