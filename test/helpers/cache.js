'use strict'

// What the primary's metrics say of the response cache, for tests that
// must wait until an answer sent to the client is also in the store.

const { request } = require('./http')
const { waitUntil } = require('./wait')

/**
 * @param {string} text the metrics endpoint's
 * @returns {Object<string, number>} the primary's svr_cache_* series (no worker label), by name and labels as written
 */
function primarySeries (text) {
  const series = {}
  for (const match of text.matchAll(/^(svr_cache_(?!requests)\w+(?:\{[^}]*\})?) (\d+)$/gm)) series[match[1]] = Number(match[2])
  return series
}

/**
 * Wait until every fill the primary let start has ended. The client has an
 * answer before its entry is written and the fill released, and a fixed
 * pause before the next request was too short on a loaded machine (a
 * range then went upstream instead of to the entry). Also at the end of a
 * test that stored: the site's directory is removed before svr is
 * stopped, and a file being written into it makes that fail.
 * @param {{port: number}} svr with `metricsPath: '/metrics'`
 * @param {() => Promise<string>} [metrics] the endpoint's text, for an svr
 *   that speaks only HTTP/2 (a GET over HTTP/1.1 unless told)
 * @returns {Promise<void>}
 */
async function fillsOver (svr, metrics = async () => (await request(svr.port, '/metrics')).body) {
  await waitUntil(async () => {
    const series = primarySeries(await metrics())
    const ended = ['stored', 'unstored', 'abandoned'].reduce((sum, result) => sum + series['svr_cache_fills_ended_total{result="' + result + '"}'], 0)
    return series.svr_cache_fills_started_total === ended
  }, 'the primary still has fills in flight')
}

module.exports = { primarySeries, fillsOver }
