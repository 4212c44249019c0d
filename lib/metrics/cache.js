'use strict'

const kCounter = Symbol('svr.cacheCounter')

/**
 * Count what the response cache did for a request: `hit` (a fresh entry),
 * `stale` (a stale one, while it is refreshed or the upstream fails),
 * `miss` (fetched from the upstream), `stored` (a miss whose answer was
 * stored). Made at its first use, while `metricsPath` is set.
 * @param {{metrics: {registry: object}|null}} runtime
 * @param {'hit'|'stale'|'miss'|'stored'} result
 */
function countCacheResult (runtime, result) {
  if (runtime.metrics === null) return
  const { registry } = runtime.metrics
  if (registry[kCounter] === undefined) {
    const { Counter } = require('prom-client')
    registry[kCounter] = new Counter({
      name: 'svr_cache_requests_total',
      help: 'Requests of proxy routes with `cache`, by what the response cache did: hit, stale, miss, stored.',
      labelNames: ['result'],
      registers: [registry]
    })
  }
  registry[kCounter].inc({ result })
}

module.exports = { countCacheResult }
