'use strict'

const { currentRequest } = require('./application/request-scope')

/**
 * Process-level event log: one line per event on stdout (info) or stderr
 * (warn, error). Under a service manager these streams are the journal, so a
 * line never spans several writes and never carries colour codes unless the
 * stream is a terminal. journald stamps lines itself, so the timestamp is left
 * out when JOURNAL_STREAM says we are talking to it.
 */

const LEVELS = {
  info: { label: 'info', colour: '\x1b[32m' },
  warn: { label: 'warn', colour: '\x1b[33m' },
  error: { label: 'error', colour: '\x1b[31m' }
}
const RESET = '\x1b[0m'
const NEWLINES = /\r?\n/g

function useTimestamps () {
  return !process.env.JOURNAL_STREAM
}

function formatLine (level, who, message, tty, stamp) {
  const text = tty ? String(message) : String(message).replace(NEWLINES, '\\n')
  const label = tty ? LEVELS[level].colour + LEVELS[level].label + RESET : LEVELS[level].label
  const time = stamp ? new Date().toISOString() + ' ' : ''
  return time + label + ' [' + who + '] ' + text + '\n'
}

// A line written while application code of a request runs names that
// request, so it can be matched to its access-log line and error page.
function withRequestId (message) {
  const request = currentRequest()
  const id = request === undefined || request.ctx === undefined ? null : request.ctx.requestId
  if (typeof id !== 'string') return message
  // Code that can run in or out of the scope names the request itself.
  const prefix = 'request ' + id + ': '
  return message.startsWith(prefix) ? message : prefix + message
}

function describe (value) {
  if (value instanceof Error) return value.stack || String(value)
  return String(value)
}

/**
 * @param {string} who process label shown in every line, e.g. 'primary' or 'worker 2'
 * @param {{events: {write: Function}|null}} [files] the process's log files (LogFiles):
 *   with `logDirectory`, every line is also appended to error.log, always with its timestamp
 * @returns {{info: Function, warn: Function, error: Function, who: string}}
 */
function createLogger (who, files = { events: null }) {
  const stamp = useTimestamps()
  function write (level, stream, parts) {
    const message = withRequestId(parts.map(describe).join(' '))
    stream.write(formatLine(level, who, message, Boolean(stream.isTTY), stamp))
    if (files.events !== null) files.events.write(formatLine(level, who, message, false, true))
  }
  return {
    who,
    info: (...parts) => write('info', process.stdout, parts),
    warn: (...parts) => write('warn', process.stderr, parts),
    error: (...parts) => write('error', process.stderr, parts)
  }
}

module.exports = { createLogger, formatLine }
