'use strict'

const { serve, inProcessPair } = require('./ipc')
const { Coordinator } = require('./coordinator')
const { RuntimeBlocklist } = require('./access/runtime-blocklist')
const { fullSnapshot } = require('./cluster-stats')
const { bytesSent } = require('./logging/access-log')
const { activeConnections, metricsSnapshot } = require('./metrics/worker')

/**
 * What one worker process holds besides its pipeline: its logger, its
 * coordinator client, the blocklist the coordinator keeps it up to date
 * with. Stages see it as `shared.runtime`; a reload builds a new pipeline
 * on the same runtime.
 */
class Runtime {
  /**
   * @param {{log: object, slot: number|null, coordinator: import('./ipc').Peer}} parts
   *   slot: the worker slot, null for the worker of --single-threaded
   */
  constructor ({ log, slot, coordinator }) {
    this.log = log
    this.slot = slot
    // The log and metrics label of this worker.
    this.name = slot === null ? 'single' : String(slot)
    this.coordinator = coordinator
    this.blocklist = new RuntimeBlocklist()
  }

  /**
   * @returns {number|null} body bytes sent so far, null when responses are not observed
   */
  bytesSent () {
    return bytesSent()
  }

  /**
   * @returns {Promise<number|null>} open client connections, null before the servers exist
   */
  activeConnections () {
    return activeConnections()
  }

  /**
   * What this worker answers the coordinator (see lib/ipc.js serve).
   * @returns {Object<string, (msg: object) => *>}
   */
  services () {
    return {
      'stats-collect': () => fullSnapshot(this),
      'metrics-collect': () => metricsSnapshot(),
      blocklist: (msg) => this.blocklist.set(msg.entries)
    }
  }
}

/**
 * The coordinator and one worker runtime in this process, joined by the
 * in-process channel: --single-threaded (and unit tests) get the same
 * services, over the same requests, as a cluster.
 * @param {object} log
 * @returns {{runtime: Runtime, coordinator: Coordinator, worker: import('./ipc').Peer}}
 *   worker: the coordinator's end of the channel to the runtime
 */
function inProcessRuntime (log) {
  let workerTable = null
  let coordinator = null
  const pair = inProcessPair(() => coordinator.table, () => workerTable)
  coordinator = new Coordinator(log, () => [{ slot: null, pid: process.pid, peer: pair.a }])
  const runtime = new Runtime({ log, slot: null, coordinator: pair.b })
  workerTable = serve(runtime.services())
  return { runtime, coordinator, worker: pair.a }
}

module.exports = { Runtime, inProcessRuntime }
