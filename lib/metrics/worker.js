'use strict'

const { setAccessLogState } = require('../logging/access-log')

// Latency buckets in seconds: a static file answers in well under a
// millisecond, a script or a slow client may take seconds.
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx']

// One registry per process: it outlives a single-process reload, so the
// counters do not restart.
let metrics = null
let trackedServers = []

/**
 * The request metrics of this process (prom-client, loaded only when
 * `metricsPath` is set). Every series carries a `worker` label, so the
 * primary's aggregation keeps one row per worker.
 * @param {string} worker the worker slot, or "single"
 */
function createMetrics (worker) {
  const { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } = require('prom-client')
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
      if (trackedServers.length === 0) return undefined
      return activeConnections().then((count) => {
        if (count !== null) this.set(count)
      })
    }
  })
  collectDefaultMetrics({ register: registry })
  function observe (exchange) {
    const index = Math.floor(exchange.status / 100) - 1
    if (index >= 0 && index < byClass.length) byClass[index].inc()
    duration.observe(exchange.duration / 1000)
    if (exchange.bytes !== 0) bytes.inc(exchange.bytes)
  }
  return { registry, observe }
}

/**
 * Turn the request metrics on or off for this process, as `metricsPath` says.
 * @param {object} options runtime options
 * @param {string} worker the worker slot, or "single"
 */
function configureMetrics (options, worker) {
  if (options.config.metricsPath === null) {
    setAccessLogState({ observer: null })
    return
  }
  if (metrics === null) metrics = createMetrics(worker)
  setAccessLogState({ observer: metrics.observe })
}

/**
 * The servers whose connections `svr_http_connections_active` counts.
 * @param {{main: import('node:net').Server, plain: import('node:net').Server|null}} servers
 */
function trackServers (servers) {
  trackedServers = servers.plain === null ? [servers.main] : [servers.main, servers.plain]
}

/**
 * @returns {Promise<number|null>} open client connections, null before the servers exist
 */
async function activeConnections () {
  if (trackedServers.length === 0) return null
  const counts = await Promise.all(trackedServers.map((server) => new Promise((resolve) => {
    server.getConnections((err, count) => resolve(err ? null : count))
  })))
  return counts.includes(null) ? null : counts.reduce((sum, count) => sum + count, 0)
}

/**
 * @returns {Promise<object[]>} this process's metrics in prom-client's JSON
 *   form (what AggregatorRegistry.aggregate takes), [] when they are off
 */
function metricsSnapshot () {
  return metrics === null ? Promise.resolve([]) : metrics.registry.getMetricsAsJSON()
}

module.exports = { configureMetrics, trackServers, activeConnections, metricsSnapshot, DURATION_BUCKETS }
