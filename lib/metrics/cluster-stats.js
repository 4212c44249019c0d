'use strict'

// The coordinator gives workers this long to send their counters; one that
// is busy or hung is reported as not answering rather than holding the page.
const COLLECT_DEADLINE_MS = 500
// A worker waits this long for the coordinator's answer before showing only
// its own counters.
const QUERY_TIMEOUT_MS = 2000

/**
 * The request counters of the whole server, gathered by the coordinator
 * from every worker (`stats-query`, and `stats-collect` to each worker).
 * @param {object} runtime this worker's runtime (lib/worker/runtime.js)
 * @returns {Promise<{started: number, complete: boolean, primary: object|null,
 *   workers: Array<{slot: number|null, pid: number|null, stats: object|null}>}>}
 *   `started`: when the server (the coordinator) started, ms since the epoch;
 *   `primary`: worker restarts and reloads (lib/metrics/primary.js), null when unknown;
 *   `complete`: false when the coordinator did not answer and only this
 *   worker's counters are shown; `stats` is null for a worker that did not answer;
 *   `certificates`: the names of automatic HTTPS (lib/acme/manager.js summary);
 *   `fleet`: the instances sharing the store (lib/store/fleet-view.js summary), null without one
 */
function collectStats (runtime) {
  return runtime.coordinator.request('stats-query', {}, { timeout: QUERY_TIMEOUT_MS }).then(
    (reply) => ({
      started: reply.started,
      complete: true,
      primary: reply.primary || null,
      workers: reply.workers,
      certificates: reply.certificates || [],
      fleet: reply.fleet || null
    }),
    async () => ({
      started: processStart(),
      complete: false,
      // Without an answer from the coordinator its counters are unknown.
      primary: null,
      workers: [{ slot: runtime.slot, pid: process.pid, stats: await fullSnapshot(runtime) }],
      certificates: [],
      fleet: null
    }))
}

/**
 * The status counters of stats.js plus what the runtime knows: body bytes
 * sent, open connections (null when unknown) and the proxy's upstreams.
 * @param {object} runtime
 * @returns {Promise<object>}
 */
async function fullSnapshot (runtime) {
  return {
    ...runtime.stats.snapshot(),
    bytesSent: runtime.bytesSent(),
    connections: await runtime.activeConnections(),
    upstreams: runtime.proxy.snapshot()
  }
}

function processStart () {
  return Date.now() - Math.round(process.uptime() * 1000)
}

/**
 * Coordinator services: `stats-query` asks every worker for its counters.
 * @param {import('./coordinator').Coordinator} coordinator
 * @returns {Object<string, Function>}
 */
function statsServices (coordinator) {
  const started = processStart()
  return {
    'stats-query': async () => ({
      started,
      primary: coordinator.counters.snapshot(),
      workers: await coordinator.askEvery('stats-collect', COLLECT_DEADLINE_MS),
      certificates: coordinator.acme.summary(),
      fleet: coordinator.fleet === null ? null : coordinator.fleet.summary()
    })
  }
}

module.exports = { collectStats, fullSnapshot, statsServices, COLLECT_DEADLINE_MS }
