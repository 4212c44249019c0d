'use strict'

// The check of a row with a `store` before it is timed: svr starts and
// serves without its store (docs/fleet.md, "When the store fails"), so a
// store that was never reached would give the rate of an svr without one
// under the store's name. Such a row fails instead of being reported.

const fs = require('node:fs/promises')

// The primary's log lines about its store (lib/store/fleet-store.js), on
// the bench's loopback server.
const STORE_LINE = /store redis:\/\/127\.0\.0\.1:\d+\S* (connected|is back after|lost|not reachable)/g
const CONNECT_TIMEOUT_MS = 5000
const POLL_MS = 20

/**
 * What the last store line of a log says.
 * @param {string} text the log of an svr
 * @returns {{up: boolean, line: string}|null} null before any store line
 */
function storeState (text) {
  const matches = [...text.matchAll(STORE_LINE)]
  if (matches.length === 0) return null
  const last = matches[matches.length - 1]
  const end = text.indexOf('\n', last.index)
  return {
    up: last[1] === 'connected' || last[1] === 'is back after',
    line: text.slice(text.lastIndexOf('\n', last.index) + 1, end === -1 ? text.length : end)
  }
}

/**
 * Wait for the target's log to say that its store is connected.
 * @param {{name: string, logFile: string}} target an svr of bench/targets.js startSvr
 * @param {{name: string}} workload
 * @param {{timeoutMs?: number}} [opts]
 * @returns {Promise<void>} rejects, quoting the log, when the store is not connected in time
 */
async function expectStoreConnected (target, workload, { timeoutMs = CONNECT_TIMEOUT_MS } = {}) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const state = storeState(await fs.readFile(target.logFile, 'utf8'))
    if (state !== null && state.up) return
    // One not reachable yet retries every 100 ms or more: it may still connect.
    if (Date.now() >= deadline) throw notConnected(target, workload, state, timeoutMs)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

function notConnected (target, workload, state, timeoutMs) {
  const said = state === null ? 'no store line' : 'last: ' + JSON.stringify(state.line)
  return new Error(`${workload.name}: ${target.name} is not connected to its store after ${timeoutMs} ms (${said} in ${target.logFile}): ` +
    'the row would measure an svr acting without its store, so it is not measured')
}

module.exports = { expectStoreConnected, storeState }
