'use strict'

const { escapeHtml } = require('../util/escape-html')

/**
 * The status page's section on proxy upstreams: each upstream's counters
 * added up over the workers that answered, and whether they send it
 * requests ("up"), or how many have it out (passive health, or the
 * primary's active checks).
 * @param {Array<{stats: object|null}>} workers the rows of collectStats
 * @returns {string} HTML, '' when no worker has an upstream
 */
function renderUpstreams (workers) {
  const rows = new Map()
  for (const { stats } of workers) {
    if (stats === null || !Array.isArray(stats.upstreams)) continue
    for (const upstream of stats.upstreams) {
      const name = String(upstream.name)
      const row = rows.get(name) || { name, requests: 0, errors: 0, inFlight: 0, queued: 0, workers: 0, out: 0 }
      row.requests += number(upstream.requests)
      row.errors += number(upstream.errors)
      row.inFlight += number(upstream.inFlight)
      row.queued += number(upstream.queued)
      row.workers++
      if (upstream.up !== true) row.out++
      rows.set(name, row)
    }
  }
  if (rows.size === 0) return ''
  return '<h2>Proxy upstreams</h2><table id="upstreams"><thead><tr><th>Upstream</th><th>State</th><th>Requests</th>' +
    '<th>Errors</th><th>In flight</th><th>Queued</th></tr></thead><tbody>' + [...rows.values()].map(upstreamRow).join('') + '</tbody></table>'
}

function upstreamRow (row) {
  const state = row.out === 0 ? 'up' : 'out in ' + row.out + ' of ' + row.workers + ' workers'
  return '<tr class="upstream"><td>' + escapeHtml(row.name) + '</td><td>' + state + '</td><td>' + row.requests +
    '</td><td>' + row.errors + '</td><td>' + row.inFlight + '</td><td>' + row.queued + '</td></tr>'
}

// Numbers come from other processes over IPC: printed as numbers only.
function number (value) {
  const n = Number(value)
  return Number.isFinite(n) ? n : 0
}

module.exports = { renderUpstreams }
