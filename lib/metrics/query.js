'use strict'

const cluster = require('node:cluster')
const { message } = require('../ipc')
const { metricsSnapshot } = require('./worker')
const { renderMetrics } = require('./primary')

// As for the status page: the primary gives each worker
// COLLECT_DEADLINE_MS to answer, the asking worker waits this long for the
// primary.
const QUERY_TIMEOUT_MS = 2000

const pending = new Map()
let lastQueryId = 0

/**
 * The metrics text of the whole server: in a cluster worker, the primary
 * gathers every worker's series (`metrics-query` -> `metrics-collect` to
 * each worker -> `metrics-snapshot` back -> `metrics-reply`); in a single
 * process, its own.
 * @returns {Promise<string>}
 * @throws {Error} when the primary does not answer in time
 */
function collectMetrics () {
  if (!cluster.isWorker || !process.connected) return renderSingle()
  const id = ++lastQueryId
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      reject(new Error('the primary did not answer the metrics query within ' + QUERY_TIMEOUT_MS + ' ms'))
    }, QUERY_TIMEOUT_MS)
    pending.set(id, { resolve, reject, timer })
    process.send(message('metrics-query', { id }))
  })
}

async function renderSingle () {
  return renderMetrics([{ slot: 'single', stats: await metricsSnapshot() }])
}

/**
 * Worker side of `metrics-reply`.
 * @param {{id: number, text?: string, error?: string}} msg
 */
function settleMetricsQuery (msg) {
  const entry = pending.get(msg.id)
  if (entry === undefined) return
  pending.delete(msg.id)
  clearTimeout(entry.timer)
  if (typeof msg.text === 'string') entry.resolve(msg.text)
  else entry.reject(new Error(String(msg.error)))
}

/**
 * Worker side of `metrics-collect`: send this process's series.
 * @param {{id: number}} msg
 */
function answerMetricsCollect (msg) {
  metricsSnapshot().then((stats) => {
    if (process.connected) process.send(message('metrics-snapshot', { id: msg.id, stats }))
  }, () => {
    if (process.connected) process.send(message('metrics-snapshot', { id: msg.id, stats: null }))
  })
}

module.exports = { collectMetrics, settleMetricsQuery, answerMetricsCollect }
