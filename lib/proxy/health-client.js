'use strict'

// How long a worker waits for the primary to take its list of checks.
const WATCH_TIMEOUT_MS = 2000

/**
 * Tell the coordinator which active health checks this worker's routes
 * want (every upstream of a route with `healthCheck`), and take the
 * verdicts known so far. The coordinator runs each check once for all
 * workers and sends later verdicts as `proxy-health` notices. A worker
 * whose new configuration has no checks says so too, so that a reload
 * without --single-threaded's new workers stops the old ones.
 * @param {import('../runtime').Runtime} runtime
 * @param {object} config
 */
function watchHealth (runtime, config) {
  const checks = []
  for (const route of config.proxy) {
    if (route.healthCheck === null) continue
    for (const upstream of route.upstreams) checks.push({ upstream, check: route.healthCheck })
  }
  if (checks.length === 0 && !runtime.proxy.watching) return
  runtime.proxy.watching = checks.length !== 0
  runtime.coordinator.request('proxy-health-watch', { checks }, { timeout: WATCH_TIMEOUT_MS }).then(
    (verdicts) => runtime.proxy.setVerdicts(verdicts),
    (err) => runtime.log.warn('proxy health checks not registered with the primary: ' + err.message))
}

module.exports = { watchHealth }
