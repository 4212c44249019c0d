'use strict'

const cluster = require('node:cluster')
const { message } = require('./ipc')
const { snapshot } = require('./stats')
const { bytesSent } = require('./logging/access-log')
const { activeConnections } = require('./metrics/worker')
const { primaryCounters } = require('./metrics/primary')

// The primary gives workers this long to send their counters; one that is
// busy or hung is reported as not answering rather than holding the page.
const COLLECT_DEADLINE_MS = 500
// A worker waits this long for the primary's answer before showing only
// its own counters.
const QUERY_TIMEOUT_MS = 2000

const pending = new Map()
let lastQueryId = 0

/**
 * The request counters of the whole server: in a cluster worker, the
 * primary gathers every worker's snapshot (`stats-query` -> `stats-collect`
 * to each worker -> `stats-snapshot` back -> `stats-reply`); in a single
 * process, its own counters.
 * @returns {Promise<{started: number, complete: boolean, primary: object|null,
 *   workers: Array<{slot: number|null, pid: number|null, stats: object|null}>}>}
 *   `started`: when the server (the primary) started, ms since the epoch;
 *   `primary`: worker restarts and reloads (lib/metrics/primary.js), null when unknown;
 *   `complete`: false when the primary did not answer and only this
 *   worker's counters are shown; `stats` is null for a worker that did not answer
 */
function collectStats () {
  if (!cluster.isWorker || !process.connected) return ownStats(true)
  const id = ++lastQueryId
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      resolve(ownStats(false))
    }, QUERY_TIMEOUT_MS)
    pending.set(id, { resolve, timer })
    process.send(message('stats-query', { id }))
  })
}

async function ownStats (complete) {
  return {
    started: processStart(),
    complete,
    // Without an answer from the primary its counters are unknown.
    primary: complete ? primaryCounters() : null,
    workers: [{ slot: slotNumber(), pid: process.pid, stats: await fullSnapshot() }]
  }
}

/**
 * The status counters of stats.js plus what the access-log hook and the
 * server know: body bytes sent and open connections (null when unknown).
 * @returns {Promise<object>}
 */
async function fullSnapshot () {
  return { ...snapshot(), bytesSent: bytesSent(), connections: await activeConnections() }
}

function slotNumber () {
  const slot = Number(process.env.SVR_SLOT)
  return Number.isInteger(slot) ? slot : null
}

function processStart () {
  return Date.now() - Math.round(process.uptime() * 1000)
}

/**
 * Worker side of `stats-reply`: hand the primary's answer to the page
 * waiting for it. A late answer (after QUERY_TIMEOUT_MS) is dropped.
 * @param {{id: number, started: number, primary?: object, workers: object[]}} msg
 */
function settleStatsQuery (msg) {
  const entry = pending.get(msg.id)
  if (entry === undefined) return
  pending.delete(msg.id)
  clearTimeout(entry.timer)
  entry.resolve({ started: msg.started, complete: true, primary: msg.primary || null, workers: msg.workers })
}

/**
 * Worker side of `stats-collect`: send this process's counters.
 * @param {{id: number}} msg
 */
function answerStatsCollect (msg) {
  fullSnapshot().then((stats) => {
    if (process.connected) process.send(message('stats-snapshot', { id: msg.id, stats }))
  })
}

/**
 * Primary side: one round per `stats-query`, asking every worker and
 * answering once all have replied or the deadline has passed.
 */
class StatsCollector {
  /**
   * @param {number} [deadline] ms the workers get to answer
   * @param {string} [act] the message asking a worker for its part:
   *   `stats-collect`, or `metrics-collect` for the metrics endpoint
   */
  constructor (deadline = COLLECT_DEADLINE_MS, act = 'stats-collect') {
    this.deadline = deadline
    this.act = act
    this.rounds = new Map()
    this.lastId = 0
    this.started = processStart()
  }

  /**
   * @param {Array<{slot: number, worker: import('node:cluster').Worker|null}>} targets
   *   every worker slot; `worker` null for a slot without a ready worker
   * @param {(reply: {started: number, workers: object[]}) => void} done called once
   */
  collect (targets, done) {
    const id = ++this.lastId
    const round = { rows: [], byWorker: new Map(), left: 0, done, timer: null }
    for (const { slot, worker } of targets) {
      const row = { slot, pid: worker === null ? null : worker.process.pid, stats: null }
      round.rows.push(row)
      if (worker === null || !worker.isConnected()) continue
      round.byWorker.set(worker, row)
      round.left++
      worker.send(message(this.act, { id }))
    }
    this.rounds.set(id, round)
    if (round.left === 0) {
      this.finish(id)
      return
    }
    round.timer = setTimeout(() => this.finish(id), this.deadline)
  }

  /**
   * @param {{id: number, stats: object}} msg a `stats-snapshot`
   * @param {import('node:cluster').Worker} worker its sender
   */
  accept (msg, worker) {
    const round = this.rounds.get(msg.id)
    if (round === undefined) return
    const row = round.byWorker.get(worker)
    if (row === undefined || row.stats !== null) return
    row.stats = msg.stats
    if (--round.left === 0) this.finish(msg.id)
  }

  finish (id) {
    const round = this.rounds.get(id)
    if (round === undefined) return
    this.rounds.delete(id)
    clearTimeout(round.timer)
    round.done({ started: this.started, workers: round.rows })
  }
}

module.exports = { collectStats, settleStatsQuery, answerStatsCollect, StatsCollector, COLLECT_DEADLINE_MS }
