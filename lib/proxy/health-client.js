'use strict'

const { parseUpstream } = require('./upstream-url')
const { routeTls } = require('./routes')

// How long a worker waits for the primary to take its list of checks.
const WATCH_TIMEOUT_MS = 2000

/**
 * Tell the coordinator which active health checks this worker's routes
 * want (every upstream of a route with `healthCheck`, with the route's TLS
 * settings for an https:// one, so that a check trusts what the route's
 * requests trust), and take the verdicts known so far. The coordinator runs each check once for all
 * workers and sends later verdicts as `proxy-health` notices. A worker
 * whose new configuration has no checks says so too, so that a reload
 * without --single-threaded's new workers stops the old ones.
 * @param {import('../runtime').Runtime} runtime
 * @param {object} config
 * @param {Array<string[]|null>} proxyCa per route, the PEM texts of its `tls.ca`
 */
function watchHealth (runtime, config, proxyCa) {
  const checks = []
  config.proxy.forEach((route, number) => {
    if (route.healthCheck === null) return
    const tls = routeTls(route, proxyCa[number])
    for (const { url } of route.upstreams) {
      checks.push({ upstream: url, check: route.healthCheck, tls: parseUpstream(url).address.secure ? tls : null, http2: route.http2 })
    }
  })
  if (checks.length === 0 && !runtime.proxy.watching) return
  runtime.proxy.watching = checks.length !== 0
  runtime.coordinator.request('proxy-health-watch', { checks }, { timeout: WATCH_TIMEOUT_MS }).then(
    (verdicts) => runtime.proxy.setVerdicts(verdicts),
    (err) => runtime.log.warn('proxy health checks not registered with the primary: ' + err.message))
}

module.exports = { watchHealth }
