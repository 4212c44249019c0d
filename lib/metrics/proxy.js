'use strict'

const { DURATION_BUCKETS } = require('./worker')

/**
 * Per-upstream series of the built-in proxy, in this worker's registry:
 * exchanges, failed ones, their duration, and whether the worker sends
 * requests to the upstream now (1) or has it out (0).
 * @param {object} registry prom-client Registry of the worker
 * @param {import('../proxy/upstreams').ProxyUpstreams} upstreams
 * @returns {{observe: (name: string, ok: boolean, seconds: number) => void, rejected: (upstreams: string, reason: string) => void}}
 */
function createProxyMetrics (registry, upstreams) {
  const { Counter, Histogram, Gauge } = require('prom-client')
  const requests = new Counter({
    name: 'svr_proxy_upstream_requests_total',
    help: 'Exchanges with a proxy upstream, failed or not.',
    labelNames: ['upstream'],
    registers: [registry]
  })
  const errors = new Counter({
    name: 'svr_proxy_upstream_errors_total',
    help: 'Exchanges with a proxy upstream that failed (connect error, reset, timeout, broken response).',
    labelNames: ['upstream'],
    registers: [registry]
  })
  const duration = new Histogram({
    name: 'svr_proxy_upstream_duration_seconds',
    help: 'Time from forwarding a request to the end of the upstream\'s response.',
    labelNames: ['upstream'],
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  const rejected = new Counter({
    name: 'svr_proxy_queue_rejected_total',
    help: 'Requests answered 503 because every upstream they could go to was at maxConnections: the queue was full, or they waited queueTimeout.',
    labelNames: ['upstreams', 'reason'],
    registers: [registry]
  })
  upstreamGauges(registry, upstreams, Gauge)
  return {
    rejected (upstreamNames, reason) {
      rejected.inc({ upstreams: upstreamNames, reason })
    },
    observe (name, ok, seconds) {
      const labels = { upstream: name }
      requests.inc(labels)
      if (!ok) errors.inc(labels)
      duration.observe(labels, seconds)
    }
  }
}

// The series read from the upstreams when scraped: in flight, queued, up.
function upstreamGauges (registry, upstreams, Gauge) {
  new Gauge({
    name: 'svr_proxy_upstream_in_flight',
    help: 'Requests of this worker waiting for or reading an answer from the upstream.',
    labelNames: ['upstream'],
    registers: [registry],
    collect () {
      for (const row of upstreams.snapshot()) this.set({ upstream: row.name }, row.inFlight)
    }
  })
  new Gauge({
    name: 'svr_proxy_upstream_queued',
    help: 'Requests of this worker waiting in a route queue for room on the upstream (maxConnections).',
    labelNames: ['upstream'],
    registers: [registry],
    collect () {
      for (const row of upstreams.snapshot()) this.set({ upstream: row.name }, row.queued)
    }
  })
  new Gauge({
    name: 'svr_proxy_upstream_healthy',
    help: 'Whether this worker sends requests to the upstream (1) or has it out (0).',
    labelNames: ['upstream'],
    registers: [registry],
    collect () {
      for (const row of upstreams.snapshot()) this.set({ upstream: row.name }, row.up ? 1 : 0)
    }
  })
}

module.exports = { createProxyMetrics }
