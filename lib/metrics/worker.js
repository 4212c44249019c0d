'use strict'

// Latency buckets in seconds: a static file answers in well under a
// millisecond, a script or a slow client may take seconds.
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx']

/**
 * The request metrics of this process (prom-client, loaded only when
 * `metricsPath` is set). Every series carries a `worker` label, so the
 * primary's aggregation keeps one row per worker.
 * @param {string} worker the worker slot, or "single"
 * @param {() => Promise<number|null>} countConnections open client connections, null when unknown
 * @returns {{registry: object, observe: (exchange: object) => void}}
 */
function createMetrics (worker, countConnections) {
  const { Registry, Counter, Histogram, Gauge } = require('prom-client')
  const registry = new Registry()
  registry.setDefaultLabels({ worker })
  const requests = new Counter({
    name: 'svr_http_requests_total',
    help: 'HTTP requests answered, by status class.',
    labelNames: ['class'],
    registers: [registry]
  })
  const byClass = CLASSES.map((name) => requests.labels({ class: name }))
  const duration = new Histogram({
    name: 'svr_http_request_duration_seconds',
    help: 'Time from the arrival of a request to the end of its response.',
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  const bytes = new Counter({
    name: 'svr_http_response_body_bytes_total',
    help: 'Response body bytes sent (after compression).',
    registers: [registry]
  })
  new Gauge({
    name: 'svr_http_connections_active',
    help: 'Open client connections.',
    registers: [registry],
    collect () {
      return countConnections().then((count) => {
        if (count !== null) this.set(count)
      })
    }
  })
  function observe (exchange) {
    const index = Math.floor(exchange.status / 100) - 1
    if (index >= 0 && index < byClass.length) byClass[index].inc()
    duration.observe(exchange.duration / 1000)
    if (exchange.bytes !== 0) bytes.inc(exchange.bytes)
  }
  return { registry, observe }
}

/**
 * The series of the process itself (CPU, memory, event loop, GC: prom-client's
 * default metrics), made on first use. Collecting them starts monitors that
 * live as long as the process, so every worker a process runs (an in-process
 * worker and its replacement after a reload) reports the same ones.
 */
class ProcessMetrics {
  /**
   * @param {string} worker the `worker` label of the series
   */
  constructor (worker) {
    this.worker = worker
    this.registry = null
  }

  /** Start collecting, once. */
  start () {
    if (this.registry !== null) return
    const { Registry, collectDefaultMetrics } = require('prom-client')
    this.registry = new Registry()
    this.registry.setDefaultLabels({ worker: this.worker })
    collectDefaultMetrics({ register: this.registry })
  }

  /**
   * @returns {Promise<object[]>} the series in prom-client's JSON form, [] before start()
   */
  snapshot () {
    return this.registry === null ? Promise.resolve([]) : this.registry.getMetricsAsJSON()
  }
}

/**
 * @param {{main: import('node:net').Server, plain: import('node:net').Server|null}|null} servers
 * @returns {Promise<number|null>} open client connections, null before the servers exist
 */
async function activeConnections (servers) {
  if (servers === null) return null
  const list = servers.plain === null ? [servers.main] : [servers.main, servers.plain]
  const counts = await Promise.all(list.map((server) => new Promise((resolve) => {
    server.getConnections((err, count) => resolve(err ? null : count))
  })))
  return counts.includes(null) ? null : counts.reduce((sum, count) => sum + count, 0)
}

module.exports = { createMetrics, ProcessMetrics, activeConnections, DURATION_BUCKETS }
