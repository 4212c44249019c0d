'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { LineSink } = require('./sink')
const { accessFormatter } = require('./format')

const ACCESS_LOG = 'access.log'
const ERROR_LOG = 'error.log'
const REASONS = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'it is a directory',
  ENOSPC: 'no space left on device'
}

/**
 * @param {{config: object, configFile: string}} options runtime options
 * @returns {string|null} the absolute log directory, null for stdout/stderr
 */
function logDirectory (options) {
  const dir = options.config.logDirectory
  if (dir === null || dir === undefined) return null
  return path.resolve(path.dirname(options.configFile), dir)
}

/**
 * Make sure the log directory exists and both log files can be appended
 * to, so that a bad `logDirectory` stops the start with one clear line
 * rather than failing in every worker later.
 * @param {object} options runtime options
 * @returns {Promise<void>}
 * @throws {Error} with code SVR_ERR_LOG_DIRECTORY and a message naming the key and the path
 */
async function checkLogDirectory (options) {
  const dir = logDirectory(options)
  if (dir === null) return
  let target = dir
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o750 })
    for (const name of [ACCESS_LOG, ERROR_LOG]) {
      target = path.join(dir, name)
      const handle = await fs.open(target, 'a', 0o640)
      await handle.close()
    }
  } catch (err) {
    const failure = new Error('logDirectory: cannot write ' + target + ': ' + (REASONS[err.code] || err.message), { cause: err })
    failure.code = 'SVR_ERR_LOG_DIRECTORY'
    throw failure
  }
}

/**
 * The log files of one process: its access-log sink (workers and the single
 * process) and its event sink (error.log), which its loggers write to
 * (createLogger(who, files) in lib/log.js). A worker's runtime holds them;
 * the primary's Supervisor holds its own.
 */
class LogFiles {
  constructor () {
    this.access = null
    this.events = null
    // One sink on stdout for the process, made on first use.
    this.stdout = null
    this.exitHook = null
  }

  /**
   * Point the logs where the configuration says: the access log to stdout
   * or access.log, event lines additionally to error.log. The previous
   * files are closed once their queued lines are written.
   * @param {object} options runtime options
   * @param {import('./access-log').AccessLog|null} accessLog the worker's access log, null in the primary
   * @returns {Promise<void>}
   */
  async configure (options, accessLog) {
    const { config } = options
    const dir = logDirectory(options)
    const next = { access: null, events: null }
    const flushDelay = config.logFlushDelay
    const wantsAccess = accessLog !== null && config.enableLogging
    if (dir !== null) {
      next.events = new LineSink({ file: path.join(dir, ERROR_LOG), flushDelay, onError: reportSinkError })
      if (wantsAccess) next.access = new LineSink({ file: path.join(dir, ACCESS_LOG), flushDelay, onError: reportSinkError })
      await Promise.all([next.events.open(), next.access === null ? null : next.access.open()])
    } else if (wantsAccess) {
      next.access = this.standardOutput()
      next.access.flushDelay = flushDelay
      await next.access.open()
    }
    const previous = [this.access, this.events]
    this.access = next.access
    this.events = next.events
    if (accessLog !== null) {
      accessLog.configure({ sink: next.access, format: next.access === null ? null : accessFormatter(config.logFormat) })
    }
    this.installExitHook()
    for (const sink of previous) {
      if (sink !== null && sink !== this.stdout && sink !== this.access && sink !== this.events) sink.close()
    }
  }

  standardOutput () {
    if (this.stdout === null) this.stdout = new LineSink({ fd: 1, onError: reportSinkError })
    return this.stdout
  }

  /**
   * Reopen the log files under their names (SIGUSR1, after logrotate).
   * @returns {Promise<boolean>} whether this process writes any log file
   */
  async reopen () {
    const sinks = [this.access, this.events].filter((sink) => sink !== null && sink !== this.stdout)
    await Promise.all(sinks.map((sink) => sink.reopen()))
    return sinks.length !== 0
  }

  /**
   * SIGUSR1 in the process that owns the signal: reopen, and say so.
   * @param {{info: Function, error: Function}} log
   * @returns {Promise<void>}
   */
  reopenOnSignal (log) {
    return this.reopen().then(
      (reopened) => { if (reopened) log.info('SIGUSR1: log files reopened') },
      (err) => log.error('cannot reopen the log files:', err.message))
  }

  /**
   * @returns {Promise<void>} settles once every queued line is written
   */
  flush () {
    const sinks = [this.access, this.events].filter((sink) => sink !== null)
    return Promise.all(sinks.map((sink) => sink.flushed())).then(() => {})
  }

  /**
   * Write what is queued and close the files: the worker of these log
   * files is done, and its process goes on (--single-threaded).
   * @returns {Promise<void>}
   */
  async close () {
    if (this.exitHook !== null) process.removeListener('exit', this.exitHook)
    this.exitHook = null
    const sinks = [this.access, this.events, this.stdout].filter((sink) => sink !== null)
    this.access = this.events = null
    await Promise.all(sinks.map((sink) => sink.close()))
  }

  // A crash exits at once; the lines of the requests before it still count.
  installExitHook () {
    if (this.exitHook !== null) return
    this.exitHook = () => {
      for (const sink of [this.access, this.events]) if (sink !== null) sink.flushSync()
    }
    process.on('exit', this.exitHook)
  }
}

function reportSinkError (err) {
  // Straight to stderr: the event log may be the very thing failing.
  process.stderr.write('svr: log write failed: ' + err.message + '\n')
}

module.exports = { checkLogDirectory, LogFiles, logDirectory, ACCESS_LOG, ERROR_LOG }
