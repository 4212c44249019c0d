'use strict'

const { countLazily } = require('./lazy-counter')

const SPEC = {
  name: 'svr_cache_requests_total',
  help: 'Requests of proxy routes with `cache`, by what the response cache did: hit, stale, revalidated, miss, stored.',
  labelNames: ['result']
}

/**
 * Count what the response cache did for a request: `hit` (a fresh entry),
 * `stale` (a stale one, while it is refreshed or the upstream fails),
 * `revalidated` (a stored one the upstream said is current, with a 304),
 * `miss` (fetched from the upstream), `stored` (a miss whose answer was stored).
 * @param {{metrics: {registry: object}|null}} runtime
 * @param {'hit'|'stale'|'revalidated'|'miss'|'stored'} result
 */
function countCacheResult (runtime, result) {
  countLazily(runtime, SPEC, { result })
}

module.exports = { countCacheResult }
