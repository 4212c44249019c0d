'use strict'

// The delay before replacing a worker that exited within crashLoopWindow
// (or before it was ready): none for the first such exit, as one early death
// is no loop yet; then it starts here and doubles with every such exit in a
// row, up to the maximum.
const BACKOFF_START_MS = 100
const BACKOFF_MAX_MS = 30000
const CRASH_LOOP_STREAK = 5

const EXIT_REASONS = {
  boot: 'before it was ready',
  early: 'within crashLoopWindow of getting ready',
  served: 'after serving longer than crashLoopWindow'
}

/**
 * A worker slot of the Supervisor.
 * @param {number} id 1, 2, …
 * @returns {{id: number, worker: object|null, options: object|null, streak: number, timer: object|null, replacing: boolean}}
 *   options: what the slot last ran; streak: exits in a row that counted towards a crash loop
 */
function createSlot (id) {
  return { id, worker: null, options: null, streak: 0, timer: null, replacing: false }
}

/**
 * @param {{ready: boolean, readyAt: number}} record the worker that exited
 * @param {number} now ms
 * @param {number} window the config's crashLoopWindow, ms
 * @returns {'boot'|'early'|'served'} the metrics label of the restart
 */
function exitReason (record, now, window) {
  if (!record.ready) return 'boot'
  return now - record.readyAt < window ? 'early' : 'served'
}

/**
 * @param {number} streak exits in a row that counted towards the slot's crash loop
 * @returns {number} ms to wait before forking the slot's next worker
 */
function backoffDelay (streak) {
  if (streak <= 1) return 0
  return Math.min(BACKOFF_START_MS * 2 ** (streak - 2), BACKOFF_MAX_MS)
}

module.exports = { createSlot, exitReason, backoffDelay, EXIT_REASONS, CRASH_LOOP_STREAK }
