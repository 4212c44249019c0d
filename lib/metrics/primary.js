'use strict'

// Events only the primary sees. Plain numbers: prom-client is loaded only
// when someone reads the metrics.
const counters = {
  restarts: 0,
  reloads: { applied: 0, refused: 0, failed: 0 }
}

/** A crashed worker is being replaced. */
function countRestart () {
  counters.restarts++
}

/**
 * @param {'applied'|'refused'|'failed'} result
 */
function countReload (result) {
  counters.reloads[result]++
}

/**
 * @returns {{restarts: number, reloads: {applied: number, refused: number, failed: number}}} a copy
 */
function primaryCounters () {
  return { restarts: counters.restarts, reloads: { ...counters.reloads } }
}

/**
 * The primary's own series, in prom-client's JSON form.
 * @param {Array<{slot: number|string, stats: object[]|null}>} rows one per worker slot;
 *   `stats` null for a worker that did not answer
 * @returns {object[]}
 */
function primaryMetrics (rows) {
  return [
    {
      name: 'svr_worker_restarts_total',
      help: 'Workers replaced after they exited unexpectedly.',
      type: 'counter',
      aggregator: 'sum',
      values: [{ labels: {}, value: counters.restarts }]
    },
    {
      name: 'svr_reloads_total',
      help: 'Configuration reloads (SIGHUP, console "restart"), by result.',
      type: 'counter',
      aggregator: 'sum',
      values: Object.keys(counters.reloads).map((result) => ({ labels: { result }, value: counters.reloads[result] }))
    },
    {
      name: 'svr_worker_up',
      help: 'Whether the worker in a slot answered this scrape (1) or not (0).',
      type: 'gauge',
      aggregator: 'sum',
      values: rows.map((row) => ({ labels: { worker: String(row.slot) }, value: Array.isArray(row.stats) ? 1 : 0 }))
    }
  ]
}

/**
 * Add up the workers' metrics (prom-client's AggregatorRegistry; every
 * worker series has its own `worker` label, so per-worker rows stay) and
 * append the primary's.
 * @param {Array<{slot: number|string, stats: object[]|null}>} rows
 * @returns {Promise<string>} Prometheus text exposition format
 */
function renderMetrics (rows) {
  const { AggregatorRegistry } = require('prom-client')
  const sets = rows.filter((row) => Array.isArray(row.stats)).map((row) => row.stats)
  sets.push(primaryMetrics(rows))
  return AggregatorRegistry.aggregate(sets).metrics()
}

module.exports = { countRestart, countReload, renderMetrics, primaryMetrics, primaryCounters }
