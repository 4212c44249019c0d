'use strict'

const { escapeLogValue, escapeBareLogValue } = require('./escape')

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/**
 * One finished request, as the access log sees it.
 * @typedef {object} AccessEntry
 * @property {string} clientAddress client address
 * @property {string|null} authUser Basic-auth user name
 * @property {number} time when the request arrived, ms since the epoch
 * @property {string} method
 * @property {string} originalUrl the request target as received
 * @property {string} protocol e.g. "HTTP/1.1"
 * @property {number} status
 * @property {number} bytes body bytes sent
 * @property {string|undefined} referer
 * @property {string|undefined} userAgent
 * @property {number} duration ms from arrival to the end of the response
 * @property {string} requestId
 * @property {string} worker the worker slot, or "single"
 * @property {boolean} completed false when the connection closed before the response was complete
 * @property {string|null} [upstream] the proxy upstream of a proxied request
 * @property {number} [upstreamTime] ms from its first attempt to the end of its response, -1 when unknown
 */

// The CLF timestamp changes once a second; most lines in a busy second
// share it. It is made by a join, which gives one flat string, where `+`
// would give a tree of its dozen pieces that V8 walks again for every line
// it copies into the batch the sink writes.
const clock = { second: -1, text: '' }

/**
 * @param {number} ms since the epoch
 * @returns {string} e.g. "10/Oct/2000:13:55:36 +0000" (always UTC)
 */
function clfTime (ms) {
  const second = Math.floor(ms / 1000)
  if (second !== clock.second) {
    const d = new Date(second * 1000)
    clock.second = second
    clock.text = [pad(d.getUTCDate()), '/', MONTHS[d.getUTCMonth()], '/', d.getUTCFullYear(), ':',
      pad(d.getUTCHours()), ':', pad(d.getUTCMinutes()), ':', pad(d.getUTCSeconds()), ' +0000'].join('')
  }
  return clock.text
}

const isoClock = { second: -1, text: '' }

/**
 * @param {number} ms since the epoch
 * @returns {string} as Date#toISOString, the date part worked out once a second
 */
function isoTime (ms) {
  const second = Math.floor(ms / 1000)
  if (second !== isoClock.second) {
    isoClock.second = second
    isoClock.text = new Date(second * 1000).toISOString().slice(0, 19)
  }
  const millis = ms - second * 1000
  return isoClock.text + (millis < 10 ? '.00' : millis < 100 ? '.0' : '.') + millis + 'Z'
}

function pad (n) {
  return n < 10 ? '0' + n : String(n)
}

function quoted (value) {
  return value === undefined || value === '' ? '"-"' : '"' + escapeLogValue(value) + '"'
}

/**
 * NCSA Combined Log Format, as Apache's "combined", with the request id as
 * one more quoted field at the end (GoAccess and AWStats' combined parsers
 * ignore what follows the User-Agent), and the word `aborted` after it when
 * the response was cut short: the status is then the one the client got,
 * the bytes those sent before the connection closed.
 *
 * A formatter keeps the fields of the line before, escaped and with the
 * separators around them: the client address, the time (it changes once a
 * second), the method, the protocol, the Referer and User-Agent. The
 * requests of a kept-alive connection, and a client's connections, repeat
 * them, and comparing a value with the last one costs less than escaping it
 * again. A line is then about ten pieces instead of twenty, and V8 joins
 * the pieces of every line once more when the lines are written: that copy
 * costs per piece.
 * @returns {(entry: AccessEntry) => string} one line, with its newline; the
 *   function's `ascii` is true: its lines are all ASCII (LineSink#write)
 */
function createCombinedFormat () {
  let address = null
  let addressField = ''
  let noUserField = ''
  let time = null
  let timeField = ''
  let method = null
  let methodField = ''
  let protocol = null
  let protocolField = ''
  let referer = null
  let userAgent = null
  let agentFields = ''
  function formatCombined (entry) {
    if (entry.clientAddress !== address) {
      address = entry.clientAddress
      addressField = escapeBareLogValue(address || '-') + ' - '
      noUserField = addressField + '-'
    }
    const clf = clfTime(entry.time)
    if (clf !== time) {
      time = clf
      // Flat, as the time itself is (clfTime).
      timeField = [' [', clf, '] "'].join('')
    }
    if (entry.method !== method) {
      method = entry.method
      methodField = escapeLogValue(method) + ' '
    }
    if (entry.protocol !== protocol) {
      protocol = entry.protocol
      protocolField = ' ' + escapeLogValue(protocol) + '" '
    }
    if (entry.referer !== referer || entry.userAgent !== userAgent) {
      referer = entry.referer
      userAgent = entry.userAgent
      agentFields = ' ' + quoted(referer) + ' ' + quoted(userAgent) + ' "'
    }
    const head = entry.authUser === null || entry.authUser === '' ? noUserField : addressField + escapeBareLogValue(entry.authUser)
    // A line the parser could not split (see AccessLog#logRejected) is kept whole.
    const request = protocol === '' ? escapeLogValue(method) + '" ' : methodField + escapeLogValue(entry.originalUrl) + protocolField
    // The request id needs no escaping: svr's own are UUIDs, and a trusted
    // proxy's is adopted only when it has none of the characters escaped
    // here (lib/logging/request-id.js).
    return head + timeField + request + statusField(entry.status) + (entry.bytes === 0 ? '-' : entry.bytes) + agentFields +
      entry.requestId + (entry.upstream === null && entry.rateLimit === null && entry.completed ? '"\n' : lineEnd(entry))
  }
  // Every field is escaped to ASCII, or is a number, svr's own word or a
  // request id, which holds only ASCII (lib/logging/request-id.js).
  formatCombined.ascii = true
  // The Combined Log Format has no field for the duration (AccessLog#wantsDuration).
  formatCombined.usesDuration = false
  return formatCombined
}

// The status and the space after it, from a table for the three-digit ones.
const STATUS_FIELDS = Array.from({ length: 1000 }, (_, status) => status + ' ')

function statusField (status) {
  const field = STATUS_FIELDS[status]
  if (field !== undefined) return field
  // Node checks a status only in writeHead: application code may set
  // res.statusCode to anything after the head has gone.
  return typeof status === 'number' ? status + ' ' : escapeBareLogValue(String(status)) + ' '
}

// The end of a line that has more than the request id.
function lineEnd (entry) {
  return '"' + upstreamFields(entry) +
    (entry.rateLimit === null || entry.rateLimit === undefined ? '' : ' rate_limit=' + entry.rateLimit) +
    (entry.completed ? '\n' : ' aborted\n')
}

const formatCombined = createCombinedFormat()

// A proxied request's upstream and its time in seconds, as key=value
// after the request id (nginx's $upstream_addr and $upstream_response_time).
function upstreamFields (entry) {
  if (entry.upstream === null || entry.upstream === undefined) return ''
  return ' upstream=' + escapeBareLogValue(entry.upstream) + ' upstream_time=' + upstreamSeconds(entry.upstreamTime)
}

// Seconds with three decimals, as toFixed(3) writes them, without its cost
// on every proxied line.
function upstreamSeconds (ms) {
  if (ms < 0) return '-'
  const millis = Math.round(ms)
  const fraction = millis % 1000
  return ((millis - fraction) / 1000) + (fraction < 10 ? '.00' : fraction < 100 ? '.0' : '.') + fraction
}

/**
 * One JSON object per line. JSON.stringify already escapes quotes and
 * control characters; U+2028/U+2029 are escaped too for line-based readers
 * that treat them as line ends.
 * @param {AccessEntry} entry
 * @returns {string}
 */
function formatJson (entry) {
  const fields = {
    time: isoTime(entry.time),
    address: entry.clientAddress,
    user: entry.authUser === null ? null : received(entry.authUser),
    method: entry.method,
    target: received(entry.originalUrl),
    protocol: entry.protocol,
    status: entry.status,
    bytes: entry.bytes,
    referer: entry.referer === undefined ? null : received(entry.referer),
    userAgent: entry.userAgent === undefined ? null : received(entry.userAgent),
    duration: Math.round(entry.duration * 1000) / 1000,
    requestId: entry.requestId,
    worker: entry.worker,
    completed: entry.completed
  }
  if (entry.rateLimit !== null && entry.rateLimit !== undefined) fields.rateLimit = entry.rateLimit
  if (entry.upstream !== null && entry.upstream !== undefined) {
    fields.upstream = entry.upstream
    fields.upstreamTime = entry.upstreamTime < 0 ? null : Math.round(entry.upstreamTime * 1000) / 1000
  }
  const line = JSON.stringify(fields)
  return escapeLineSeparators(line) + '\n'
}

const LINE_SEPARATORS = /[\u2028\u2029]/g
const HIGH_LATIN1 = /[\x80-\xff]/
const BEYOND_LATIN1 = /[\u0100-\uffff]/

// Node hands over request bytes as latin1 characters; JSON is text, so
// bytes that were UTF-8 are shown as the characters they encode (invalid
// sequences as U+FFFD) rather than as mojibake.
function received (value) {
  if (!HIGH_LATIN1.test(value) || BEYOND_LATIN1.test(value)) return value
  return Buffer.from(value, 'latin1').toString('utf8')
}

function escapeLineSeparators (line) {
  return line.replace(LINE_SEPARATORS, (c) => c === '\u2028' ? '\\u2028' : '\\u2029')
}

const FORMATS = { combined: createCombinedFormat, json: () => formatJson }

/**
 * @param {'combined'|'json'} name the `logFormat` value
 * @returns {(entry: AccessEntry) => string} a formatter of its own
 */
function accessFormatter (name) {
  if (!Object.hasOwn(FORMATS, name)) throw new TypeError('unknown log format: ' + name)
  return FORMATS[name]()
}

module.exports = { accessFormatter, createCombinedFormat, formatCombined, formatJson, clfTime, isoTime }
