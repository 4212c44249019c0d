'use strict'

/**
 * The svr_cache_* series only the primary knows (the workers count
 * svr_cache_requests_total), in prom-client's JSON form.
 * @param {{started: number, stored: number, unstored: number, abandoned: number}} fills lib/cache/fill-locks.js counts
 * @param {{evicted: number, console: number, request: number, reload: number}} removed entries let go, by why
 * @param {{bytes: number, entries: number}} held what the budget holds now
 * @returns {object[]}
 */
function cacheMetricSeries (fills, removed, held) {
  return [
    {
      name: 'svr_cache_fills_started_total',
      help: 'Fetches of a missing or stale entry the primary let a worker start (one per key at a time).',
      type: 'counter',
      aggregator: 'sum',
      values: [{ labels: {}, value: fills.started }]
    },
    {
      name: 'svr_cache_fills_ended_total',
      help: 'Fetches of the response cache that ended, by result: stored, unstored (an answer not to keep, a failure), or abandoned (past lockTimeout, or its worker went away).',
      type: 'counter',
      aggregator: 'sum',
      values: ['stored', 'unstored', 'abandoned'].map((result) => ({ labels: { result }, value: fills[result] }))
    },
    {
      name: 'svr_cache_evictions_total',
      help: 'Entries removed to keep responseCache.maxSize: the least recently used, or one larger than it alone.',
      type: 'counter',
      aggregator: 'sum',
      values: [{ labels: {}, value: removed.evicted }]
    },
    {
      name: 'svr_cache_purged_total',
      help: 'Entries removed by purges, by where the purge came from: the console, a PURGE request, a reload with purgeOnReload, or a POST, PUT, PATCH or DELETE to the URL (unsafe).',
      type: 'counter',
      aggregator: 'sum',
      values: ['console', 'request', 'reload', 'unsafe'].map((source) => ({ labels: { source }, value: removed[source] }))
    },
    {
      name: 'svr_cache_size_bytes',
      help: 'Bytes the entries of the response cache take on disk, as the budget counts them.',
      type: 'gauge',
      aggregator: 'sum',
      values: [{ labels: {}, value: held.bytes }]
    },
    {
      name: 'svr_cache_entries',
      help: 'Entries the response cache holds.',
      type: 'gauge',
      aggregator: 'sum',
      values: [{ labels: {}, value: held.entries }]
    }
  ]
}

module.exports = { cacheMetricSeries }
