'use strict'

const { RuntimeBlocklist } = require('../access/runtime-blocklist')
const { fullSnapshot } = require('../metrics/cluster-stats')
const { AccessLog } = require('../logging/access-log')
const { createMetrics, ProcessMetrics, activeConnections } = require('../metrics/worker')
const { WorkerBalance } = require('../balance/worker')
const { RequestStats } = require('./request-stats')
const { SiteChromes } = require('../application/api/site-chrome')
const { WorkerCertificates } = require('../acme/worker')
const { ProxyUpstreams } = require('../proxy/upstreams')
const { createProxyMetrics } = require('../metrics/proxy')
const { knownSessionIds, learnSessionIds } = require('../tls/session-cache')

/**
 * What one worker holds besides its pipeline: its logger and log files, its
 * coordinator client, the blocklist the coordinator keeps it up to date
 * with, its access log, its metrics registry, its share of the load
 * balance, the site head and foot of SVR.JS scripts and its servers.
 * Stages see it as `shared.runtime`. A reload starts new workers, each with
 * a runtime of its own.
 */
class Runtime {
  /**
   * @param {{log: object, logs: import('./logging').LogFiles, slot: number|null, coordinator: import('./ipc').Peer,
   *   processMetrics?: ProcessMetrics}} parts
   *   logs: the worker's log files, which `log` writes to; slot: the worker slot, null for the worker
   *   of --single-threaded; processMetrics: the series of the process, when it runs more than one worker
   */
  constructor ({ log, logs, slot, coordinator, processMetrics }) {
    this.log = log
    this.logs = logs
    this.slot = slot
    // The log and metrics label of this worker.
    this.name = slot === null ? 'single' : String(slot)
    this.coordinator = coordinator
    this.blocklist = new RuntimeBlocklist()
    // Requests, errors and malformed requests, for the status page.
    this.stats = new RequestStats()
    this.accessLog = new AccessLog(this.name, this.stats)
    // prom-client's registry, made when `metricsPath` is first set.
    this.metrics = null
    this.processMetrics = processMetrics || new ProcessMetrics(this.name)
    // Its HTTP/1 connections against its fair share (lib/balance).
    this.balance = new WorkerBalance()
    // The site head and foot (`.head`, `.foot`) that SVR.JS scripts see, per webroot.
    this.siteChromes = new SiteChromes(log)
    // The proxy's upstreams: pools, health, counters (lib/proxy).
    this.proxy = new ProxyUpstreams()
    // The buckets of `rateLimits` (lib/traffic/limiter.js), made by its stage.
    this.rateLimiter = null
    // The response cache (lib/cache/worker-cache.js), made with each pipeline.
    this.responseCache = null
    // The fleet's TLS session ticket keys once the primary sent them (useTicketKeys).
    this.ticketKeys = null
    // The ids of the TLS sessions the coordinator holds (lib/tls/session-cache.js).
    this.knownSessions = knownSessionIds()
    // The servers whose connections the status page and metrics count.
    this.servers = null
    // The certificates automatic HTTPS hands this worker (lib/acme/).
    this.certificates = new WorkerCertificates(coordinator)
  }

  /**
   * Stop what the runtime keeps running: the worker is done, and its
   * process may go on (an in-process worker).
   */
  release () {
    this.balance.stopReports()
    this.siteChromes.close()
    this.proxy.close()
    if (this.rateLimiter !== null) this.rateLimiter.stop()
    if (this.responseCache !== null) this.responseCache.stop()
    if (this.servers === null) return
    // Node's HTTP servers check their connections' timeouts on an interval
    // that only their own close() stops (a drain closes them as net.Servers),
    // and that interval would hold the servers and their pipeline.
    for (const server of [this.servers.main, this.servers.plain]) if (server !== null) server.close()
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
    this.processMetrics.start()
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
  async metricsSnapshot () {
    if (this.metrics === null) return []
    const [own, processSeries] = await Promise.all([this.metrics.registry.getMetricsAsJSON(), this.processMetrics.snapshot()])
    return own.concat(processSeries)
  }

  /**
   * The fleet's TLS session ticket keys (lib/tls/fleet-ticket-keys.js): the
   * secure server takes them now, or when it is made. Only the server's own
   * context matters: OpenSSL encrypts and decrypts tickets with the context
   * a handshake began on, also when SNI then picks another certificate.
   * @param {string} keys base64, 48 bytes
   */
  useTicketKeys (keys) {
    if (typeof keys !== 'string') return
    const buffer = Buffer.from(keys, 'base64')
    if (buffer.length !== 48) return
    this.ticketKeys = buffer
    const main = this.servers === null ? null : this.servers.main
    if (main !== null && typeof main.setTicketKeys === 'function') main.setTicketKeys(buffer)
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
      'peer-load': (msg) => this.balance.peerLoad(msg),
      'acme-install': (msg) => this.certificates.install(msg),
      'acme-alpn': (msg) => this.certificates.challenge(msg),
      'proxy-health': (msg) => this.proxy.setVerdicts(msg.verdicts),
      'cache-drop': (msg) => { if (this.responseCache !== null && Array.isArray(msg.keys)) this.responseCache.drop(msg.keys) },
      'ticket-keys': (msg) => this.useTicketKeys(msg.keys),
      'tls-sessions-known': (msg) => learnSessionIds(this.knownSessions, msg.sessions)
    }
  }
}

module.exports = { Runtime }
