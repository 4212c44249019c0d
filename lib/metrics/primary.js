'use strict'

/**
 * What only the Supervisor sees: workers replaced after an unexpected exit
 * and reloads. Plain numbers: prom-client is loaded only when someone reads
 * the metrics. The Supervisor owns one and hands it to its coordinator,
 * which reports it on the status page and in the metrics.
 */
class PrimaryCounters {
  constructor () {
    // Why the replaced worker counted, or not, towards its slot's crash loop
    // (lib/primary/run-primary.js): it exited before it was ready, within crashLoopWindow
    // after, or after serving longer.
    this.restarts = { boot: 0, early: 0, served: 0 }
    this.reloads = { applied: 0, refused: 0, failed: 0 }
  }

  /**
   * A worker that exited unexpectedly is being replaced.
   * @param {'boot'|'early'|'served'} reason
   */
  countRestart (reason) {
    this.restarts[reason]++
  }

  /**
   * @param {'applied'|'refused'|'failed'} result
   */
  countReload (result) {
    this.reloads[result]++
  }

  /**
   * @returns {{restarts: number, reloads: {applied: number, refused: number, failed: number}}} a copy
   */
  snapshot () {
    const { boot, early, served } = this.restarts
    return { restarts: boot + early + served, reloads: { ...this.reloads } }
  }
}

/**
 * The primary's own series, in prom-client's JSON form.
 * @param {Array<{slot: number|string, stats: object[]|null}>} rows one per worker slot;
 *   `stats` null for a worker that did not answer
 * @param {PrimaryCounters} counters
 * @returns {object[]}
 */
function primaryMetrics (rows, counters) {
  return [
    {
      name: 'svr_worker_restarts_total',
      help: 'Workers replaced after they exited unexpectedly, by when: before they were ready (boot), within crashLoopWindow after (early), or later (served).',
      type: 'counter',
      aggregator: 'sum',
      values: Object.keys(counters.restarts).map((reason) => ({ labels: { reason }, value: counters.restarts[reason] }))
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
 * @param {PrimaryCounters} counters
 * @param {object[]} [coordinatorSeries] series the coordinator's services keep (svr_acme_*, the primary's svr_cache_*)
 * @returns {Promise<string>} Prometheus text exposition format
 */
function renderMetrics (rows, counters, coordinatorSeries = []) {
  const { AggregatorRegistry } = require('prom-client')
  const sets = rows.filter((row) => Array.isArray(row.stats)).map((row) => row.stats)
  sets.push([...primaryMetrics(rows, counters), ...coordinatorSeries])
  return AggregatorRegistry.aggregate(sets).metrics()
}

module.exports = { PrimaryCounters, renderMetrics, primaryMetrics }
