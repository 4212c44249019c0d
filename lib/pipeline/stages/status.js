'use strict'

const os = require('node:os')
const { compileAddressList, isLocalClient } = require('../../access/address-list')
const { collectStats } = require('../../metrics/cluster-stats')
const { escapeHtml } = require('../../util/escape-html')
const { renderUpstreams } = require('../../proxy/status-section')
const { headForWrappers } = require('../request/tolerant-response')

const STATUS_PATH = '/svrjsstatus.svr'
const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dd{margin:0}' +
  'table{border-collapse:collapse}th,td{padding:.2rem .6rem;border-bottom:1px solid #ccc;text-align:right}' +
  '.missing{color:#a32}@media (prefers-color-scheme:dark){body{background:#1b1b1b;color:#ddd}}'

/**
 * The status page /svrjsstatus.svr (`allowStatus`): uptimes,
 * memory, and request counters added up over every worker. Only loopback
 * clients and `statusAllow` may see it; to anyone else it does not exist,
 * so the request goes on (and ends in a 404) instead of revealing a 403.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null when `allowStatus` is off
 */
function createStatusStage (options, shared) {
  const { config } = options
  if (!config.allowStatus) return null
  const isAllowed = createStatusAllowCheck(config.statusAllow)
  // The handlers stage, earlier in the pipeline, has filled shared.mods.
  const page = { serverString: shared.serverString, mods: shared.mods }
  return function serveStatus (req, res, ctx) {
    if (ctx.pathname !== STATUS_PATH || !isAllowed(ctx.clientAddress)) return false
    return collectStats(shared.runtime).then((result) => {
      sendPage(req, res, renderPage(page, req, result))
      return true
    })
  }
}

/**
 * @param {string[]} statusAllow addresses and CIDR ranges besides loopback
 * @returns {(address: string) => boolean}
 */
function createStatusAllowCheck (statusAllow) {
  const extra = compileAddressList(statusAllow)
  if (extra === null) return isLocalClient
  return function isStatusClient (address) {
    return isLocalClient(address) || extra(address)
  }
}

function sendPage (req, res, body) {
  if (res.headersSent || res.destroyed) return
  res.statusCode = 200
  res.setHeader('Content-Type', 'text/html; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-store')
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
  res.setHeader('X-Content-Type-Options', 'nosniff')
  headForWrappers(res)
  res.end(req.method === 'HEAD' ? undefined : body)
}

/**
 * @param {{serverString: string, mods: string[]}} page
 * @param {import('node:http').IncomingMessage} req
 * @param {{started: number, complete: boolean, workers: object[]}} result from collectStats
 * @returns {string}
 */
function renderPage (page, req, result) {
  const now = Date.now()
  const totals = sumWorkers(result.workers, now)
  const answered = totals.answered
  const errors = totals.status4xx + totals.status5xx
  const host = req.headers.host ? ' for ' + req.headers.host : ''
  const title = escapeHtml('svr status' + host)
  const note = result.complete
    ? ''
    : '<p class="missing">The primary process did not answer: only this worker\'s counters are shown.</p>'
  return '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>' + title + '</title>' +
    '<style>' + STYLE + '</style></head><body><h1>' + title + '</h1>' + note + '<dl>' +
    item('server', 'Server', escapeHtml(page.serverString)) +
    item('time', 'Current time', new Date(now).toISOString()) +
    item('server-uptime', 'Server uptime', formatDuration(now - result.started)) +
    item('os-uptime', 'OS uptime', formatDuration(os.uptime() * 1000)) +
    item('workers', 'Workers answering', answered + ' of ' + result.workers.length) +
    item('requests', 'Requests', totals.requests) +
    item('request-rate', 'Request rate (per second, averaged since each worker started)', totals.rate.toFixed(3)) +
    item('status-4xx', 'Client errors (4xx)', totals.status4xx) +
    item('status-5xx', 'Server errors (5xx)', totals.status5xx) +
    item('error-rate', 'Error rate', totals.requests === 0 ? '0.00 %' : (100 * errors / totals.requests).toFixed(2) + ' %') +
    item('malformed', 'Malformed requests', totals.malformed) +
    item('bytes-sent', 'Response body bytes sent', totals.bytesSent === null ? '-' : totals.bytesSent) +
    item('connections', 'Open connections', totals.connections === null ? '-' : totals.connections) +
    item('restarts', 'Worker restarts', result.primary ? count(result.primary.restarts) : '-') +
    item('reloads', 'Reloads applied', result.primary ? count(result.primary.reloads && result.primary.reloads.applied) : '-') +
    item('mods', 'Mods and script', page.mods.length === 0 ? 'none' : escapeHtml(page.mods.join(', '))) +
    '</dl><h2>Workers</h2><table><thead><tr><th>Slot</th><th>PID</th><th>Requests</th><th>4xx</th><th>5xx</th>' +
    '<th>RSS</th><th>CPU time</th><th>CPU</th><th>Uptime</th><th>Connections</th><th>Bytes sent</th></tr></thead><tbody>' +
    result.workers.map((worker) => workerRow(worker, now)).join('') +
    '</tbody></table>' + certificateTable(result.certificates || [], now) + fleetTable(result.fleet || null, now) + renderUpstreams(result.workers) + '<footer><em>' + escapeHtml(page.serverString) + '</em></footer></body></html>\n'
}

// Automatic HTTPS: one row per name, with the CA's last error while
// orders fail.
function certificateTable (certificates, now) {
  if (certificates.length === 0) return ''
  return '<h2>Certificates (automatic HTTPS)</h2><table id="certificates"><thead><tr><th>Name</th><th>Expires</th>' +
    '<th>Failed orders in a row</th><th>Last error</th><th>Next check</th></tr></thead><tbody>' +
    certificates.map((row) => '<tr><td>' + escapeHtml(row.name) + '</td><td>' +
      (row.notAfter === null ? 'none yet' : new Date(row.notAfter).toISOString() + ' (in ' + formatDuration(row.notAfter - now) + ')') +
      '</td><td>' + row.failures + '</td><td>' + (row.lastError === null ? '-' : escapeHtml(row.lastError)) + '</td><td>' +
      (row.nextCheck === null ? '-' : 'in ' + formatDuration(Math.max(0, row.nextCheck - now))) + '</td></tr>').join('') +
    '</tbody></table>'
}

// The instances sharing the store, as the primary last read them.
function fleetTable (fleet, now) {
  if (fleet === null) return ''
  const state = fleet.up ? '' : '<p class="missing">The store is not reachable: this instance acts on its own; the list is as last read' +
    (fleet.readAt === 0 ? ' (never)' : ' ' + formatDuration(now - fleet.readAt) + ' ago') + '.</p>'
  return '<h2>Fleet (store)</h2>' + state + '<table id="fleet"><thead><tr><th>Instance</th><th>Version</th><th>Started</th><th>Last seen</th></tr></thead><tbody>' +
    fleet.members.map((member) => '<tr' + (member.instance === fleet.self ? ' class="self"' : '') + '><td>' + escapeHtml(member.instance) +
      (member.instance === fleet.self ? ' (this one)' : '') + '</td><td>' + escapeHtml(member.version) + '</td><td>' +
      (member.started === 0 ? '-' : new Date(member.started).toISOString()) + '</td><td>' + formatDuration(Math.max(0, now - member.seen)) + ' ago</td></tr>').join('') +
    '</tbody></table>'
}

function item (id, label, value) {
  return '<dt>' + escapeHtml(label) + '</dt><dd id="' + id + '">' + value + '</dd>'
}

function sumWorkers (workers, now) {
  const totals = { answered: 0, requests: 0, status4xx: 0, status5xx: 0, malformed: 0, rate: 0, bytesSent: null, connections: null }
  for (const { stats } of workers) {
    if (stats === null) continue
    totals.answered++
    if (known(stats.bytesSent)) totals.bytesSent += count(stats.bytesSent)
    if (known(stats.connections)) totals.connections += count(stats.connections)
    totals.requests += count(stats.requests)
    totals.status4xx += count(stats.status4xx)
    totals.status5xx += count(stats.status5xx)
    totals.malformed += count(stats.malformed)
    const seconds = (now - count(stats.started)) / 1000
    if (seconds > 0) totals.rate += count(stats.requests) / seconds
  }
  return totals
}

function workerRow (worker, now) {
  const slot = worker.slot === null ? '-' : count(worker.slot)
  const pid = worker.pid === null ? '-' : count(worker.pid)
  const { stats } = worker
  if (stats === null) {
    return '<tr class="worker missing"><td>' + slot + '</td><td>' + pid + '</td><td colspan="9">did not answer</td></tr>'
  }
  const uptime = now - count(stats.started)
  const cpu = (count(stats.cpuUser) + count(stats.cpuSystem)) / 1000
  const share = uptime > 0 ? (100 * cpu / uptime).toFixed(1) + ' %' : '-'
  return '<tr class="worker"><td>' + slot + '</td><td>' + pid + '</td><td>' + count(stats.requests) +
    '</td><td>' + count(stats.status4xx) + '</td><td>' + count(stats.status5xx) + '</td><td>' +
    formatBytes(count(stats.rss)) + '</td><td>' + (cpu / 1000).toFixed(2) + ' s</td><td>' + share +
    '</td><td>' + formatDuration(uptime) + '</td><td>' + (known(stats.connections) ? count(stats.connections) : '-') +
    '</td><td>' + (known(stats.bytesSent) ? count(stats.bytesSent) : '-') + '</td></tr>'
}

// Numbers come from other processes over IPC; whatever arrives is printed
// as a number, never as markup.
function count (value) {
  const n = Number(value)
  return Number.isFinite(n) ? n : 0
}

// A worker that does not observe responses reports null.
function known (value) {
  return value !== null && value !== undefined
}

function formatBytes (bytes) {
  return (bytes / 1048576).toFixed(1) + ' MiB'
}

/**
 * @param {number} ms
 * @returns {string} e.g. "2d 3h 4m 5s"
 */
function formatDuration (ms) {
  let seconds = Math.max(0, Math.floor(ms / 1000))
  const days = Math.floor(seconds / 86400)
  seconds -= days * 86400
  const hours = Math.floor(seconds / 3600)
  seconds -= hours * 3600
  const minutes = Math.floor(seconds / 60)
  seconds -= minutes * 60
  return (days > 0 ? days + 'd ' : '') + (days + hours > 0 ? hours + 'h ' : '') +
    (days + hours + minutes > 0 ? minutes + 'm ' : '') + seconds + 's'
}

module.exports = { createStatusStage, createStatusAllowCheck, formatDuration, STATUS_PATH }
