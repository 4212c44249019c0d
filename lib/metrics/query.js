'use strict'

const { renderMetrics } = require('./primary')
const { COLLECT_DEADLINE_MS } = require('./cluster-stats')
const { storeMetrics } = require('../store/metrics')

// As for the status page: the coordinator gives each worker
// COLLECT_DEADLINE_MS to answer, the asking worker waits this long.
const QUERY_TIMEOUT_MS = 2000

/**
 * The metrics text of the whole server, gathered by the coordinator from
 * every worker (`metrics-query`, and `metrics-collect` to each worker).
 * @param {object} runtime this worker's runtime (lib/worker/runtime.js)
 * @returns {Promise<string>}
 * @throws {Error} when the coordinator does not answer in time
 */
function collectMetrics (runtime) {
  return runtime.coordinator.request('metrics-query', {}, { timeout: QUERY_TIMEOUT_MS })
}

/**
 * Coordinator services: `metrics-query` asks every worker for its series
 * and renders them as one text. A malformed snapshot makes the aggregation
 * throw; that fails this scrape (an error reply), not the coordinator.
 * @param {import('../coordinator').Coordinator} coordinator
 * @returns {Object<string, Function>}
 */
function metricsServices (coordinator) {
  return {
    'metrics-query': async () => {
      const rows = await coordinator.askEvery('metrics-collect', COLLECT_DEADLINE_MS)
      // The worker of --single-threaded has no slot number.
      const own = [...coordinator.acme.metrics(), ...coordinator.cache.metrics(), ...storeMetrics(coordinator.store, coordinator.fleet)]
      return renderMetrics(rows.map((row) => ({ slot: row.slot === null ? 'single' : row.slot, stats: row.stats })), coordinator.counters, own)
    }
  }
}

module.exports = { collectMetrics, metricsServices }
