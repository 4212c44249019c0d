'use strict'

const { DURATION_BUCKETS } = require('./worker')

/**
 * Per-upstream series of the built-in proxy, in this worker's registry:
 * exchanges, failed ones, their duration, and whether the worker sends
 * requests to the upstream now (1) or has it out (0).
 * @param {object} registry prom-client Registry of the worker
 * @param {import('../proxy/upstreams').ProxyUpstreams} upstreams
 * @returns {{observe: (name: string, ok: boolean, seconds: number) => void}}
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
  new Gauge({
    name: 'svr_proxy_upstream_healthy',
    help: 'Whether this worker sends requests to the upstream (1) or has it out (0).',
    labelNames: ['upstream'],
    registers: [registry],
    collect () {
      for (const row of upstreams.snapshot()) this.set({ upstream: row.name }, row.up ? 1 : 0)
    }
  })
  return {
    observe (name, ok, seconds) {
      const labels = { upstream: name }
      requests.inc(labels)
      if (!ok) errors.inc(labels)
      duration.observe(labels, seconds)
    }
  }
}

module.exports = { createProxyMetrics }
