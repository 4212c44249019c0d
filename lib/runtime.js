'use strict'

const { RuntimeBlocklist } = require('./access/runtime-blocklist')
const { fullSnapshot } = require('./cluster-stats')
const { AccessLog } = require('./logging/access-log')
const { createMetrics, activeConnections } = require('./metrics/worker')
const { WorkerBalance } = require('./balance/worker')
const { RequestStats } = require('./stats')
const { ProxyUpstreams } = require('./proxy/upstreams')
const { createProxyMetrics } = require('./metrics/proxy')

/**
 * What one worker process holds besides its pipeline: its logger and log
 * files, its coordinator client, the blocklist the coordinator keeps it up
 * to date with, its access log, its metrics registry, its share of the load
 * balance and its servers. Stages see it as `shared.runtime`; a reload
 * builds a new pipeline on the same runtime, so counters and the metrics
 * registry carry on.
 */
class Runtime {
  /**
   * @param {{log: object, logs: import('./logging').LogFiles, slot: number|null, coordinator: import('./ipc').Peer, accessLog?: AccessLog}} parts
   *   logs: the process's log files, which `log` writes to; slot: the worker slot, null for the worker
   *   of --single-threaded; accessLog: one made before the runtime (--single-threaded opens its logs first)
   */
  constructor ({ log, logs, slot, coordinator, accessLog }) {
    this.log = log
    this.logs = logs
    this.slot = slot
    // The log and metrics label of this worker.
    this.name = slot === null ? 'single' : String(slot)
    this.coordinator = coordinator
    this.blocklist = new RuntimeBlocklist()
    // Requests, errors and malformed requests, for the status page.
    this.stats = new RequestStats()
    this.accessLog = accessLog || new AccessLog(this.name)
    // prom-client's registry, made when `metricsPath` is first set.
    this.metrics = null
    // Its HTTP/1 connections against its fair share (lib/balance).
    this.balance = new WorkerBalance()
    // The proxy's upstreams: pools, health, counters (lib/proxy).
    this.proxy = new ProxyUpstreams()
    // The servers whose connections the status page and metrics count.
    this.servers = null
  }

  /**
   * Turn the request metrics on or off, as `metricsPath` says.
   * @param {object} options runtime options
   */
  configureMetrics (options) {
    if (options.config.metricsPath === null) {
      this.accessLog.configure({ observer: null })
      return
    }
    if (this.metrics === null) {
      this.metrics = createMetrics(this.name, () => this.activeConnections())
      this.proxy.metrics = createProxyMetrics(this.metrics.registry, this.proxy)
    }
    this.accessLog.configure({ observer: this.metrics.observe })
  }

  /**
   * @returns {number|null} body bytes sent so far, null when responses are not observed
   */
  bytesSent () {
    return this.accessLog.bytesSent()
  }

  /**
   * @returns {Promise<number|null>} open client connections, null before the servers exist
   */
  activeConnections () {
    return activeConnections(this.servers)
  }

  /**
   * @returns {Promise<object[]>} this process's metrics in prom-client's JSON
   *   form (what AggregatorRegistry.aggregate takes), [] when they are off
   */
  metricsSnapshot () {
    return this.metrics === null ? Promise.resolve([]) : this.metrics.registry.getMetricsAsJSON()
  }

  /**
   * What this worker answers the coordinator (see lib/ipc.js serve).
   * @returns {Object<string, (msg: object) => *>}
   */
  services () {
    return {
      'stats-collect': () => fullSnapshot(this),
      'metrics-collect': () => this.metricsSnapshot(),
      blocklist: (msg) => this.blocklist.set(msg.entries),
      'fair-share': (msg) => this.balance.share(msg),
      'proxy-health': (msg) => this.proxy.setVerdicts(msg.verdicts)
    }
  }
}

module.exports = { Runtime }
