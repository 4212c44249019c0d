'use strict'

const { listenError } = require('../listen')

// How long console `open` waits for a worker to listen again.
const ACCEPTING_TIMEOUT_MS = 5000

/**
 * Methods of the Supervisor (./supervisor.js) for what signals and the console
 * ask of every worker: reopen the logs, take a new blocklist, stop or start
 * accepting, run a mod's command.
 */
const operatorControls = {
  // SIGUSR1, after logrotate has renamed the files: the primary's own
  // error.log, and every worker's.
  reopenLogs () {
    this.logs.reopenOnSignal(this.log)
    this.broadcast('reopen-logs')
  },

  setBlocked (entries) {
    this.blocked = entries
    // Every worker, also one still booting (its boot message had the old list).
    this.broadcast('blocklist', { entries })
  },

  /**
   * Console close/open. Closed, the primary lets go of its sockets too, so
   * that new clients are refused rather than left waiting in the backlog.
   * Opening binds them again and settles once every worker listens on them:
   * a bound socket that nobody listens on refuses connections.
   * @param {boolean} open
   * @returns {Promise<string|null>} why the server could not be opened
   */
  async setAccepting (open) {
    if (!open) {
      this.accepting = false
      this.sockets.close()
      this.broadcast('accepting', { open })
      return null
    }
    if (this.accepting) return null
    try {
      this.sockets.reopen()
    } catch (err) {
      return listenError(err).message
    }
    this.accepting = true
    const listening = []
    for (const [worker, record] of this.records) {
      if (record.retiring || !worker.isConnected()) continue
      record.hasSockets = this.sendSockets(record)
      // A worker that does not answer in time is past helping; the others are open.
      listening.push(record.peer.request('accepting', { open }, { timeout: ACCEPTING_TIMEOUT_MS }).catch(() => {}))
    }
    await Promise.all(listening)
    return null
  },

  /**
   * Ask every worker that serves (not one retiring or still booting).
   * @param {string} act
   * @param {object} fields
   * @param {number} timeout ms per worker
   * @returns {Promise<Array<{label: string, value?: *, error?: Error}>>} one answer per worker
   */
  askServing (act, fields, timeout) {
    const asked = []
    for (const [worker, record] of this.records) {
      if (record.retiring || !record.ready || !worker.isConnected()) continue
      const label = this.launcher.name(record.slot, worker)
      asked.push(record.peer.request(act, fields, { timeout }).then((value) => ({ label, value }), (error) => ({ label, error })))
    }
    return Promise.all(asked)
  },

  broadcast (act, fields) {
    for (const record of this.records.values()) record.peer.notify(act, fields)
  }
}

module.exports = { operatorControls }
