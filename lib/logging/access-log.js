'use strict'

const { socketAddresses } = require('../hosts/vhost')
const { newRequestId } = require('./request-id')

/**
 * What one worker does with its finished requests: a line to the access
 * log's sink, the metrics' observer, and the body bytes for the status page.
 * Each worker's runtime holds one; a reload reconfigures it.
 */
class AccessLog {
  /**
   * @param {string} worker the worker slot, or "single", for the log lines
   * @param {{countFinished: (status: number) => void}|null} [stats] the
   *   worker's request counters (lib/worker/request-stats.js), which count
   *   the status of each finished response this reports
   */
  constructor (worker, stats = null) {
    this.worker = worker
    this.stats = stats
    this.format = null
    this.sink = null
    // The format's lines are all ASCII (LineSink#write).
    this.asciiLines = false
    // A request's duration is read by the metrics and by a format that
    // writes it; without either, the two clock readings of every request
    // (lib/pipeline/request/response-bytes.js) are spared.
    this.wantsDuration = false
    this.observer = null
    // Body bytes of every response observed, for the status page.
    this.sent = 0
  }

  /**
   * @param {{format?: Function|null, sink?: object|null, observer?: Function|null}} changes
   */
  configure (changes) {
    Object.assign(this, changes)
    this.asciiLines = typeof this.format === 'function' && this.format.ascii === true
    this.wantsDuration = this.observer !== null || (typeof this.format === 'function' && this.format.usesDuration !== false)
  }

  /**
   * @returns {boolean} whether anybody wants finished requests reported
   */
  get wanted () {
    return this.sink !== null || this.observer !== null
  }

  /**
   * @returns {number|null} body bytes sent so far, null when responses are not
   *   observed (neither the access log nor the metrics are on)
   */
  bytesSent () {
    return this.wanted ? this.sent : null
  }

  report (entry) {
    this.sent += entry.bytes
    if (this.sink !== null) this.sink.write(this.format(entry), this.asciiLines)
    if (this.observer !== null) this.observer(entry)
  }

  /**
   * Log a request that Node's parser refused and that never reached the
   * pipeline (lib/worker/client-error.js answers it on the raw socket), so scanners
   * and broken clients show up in the access log and the metrics too. A line
   * that is not "METHOD target HTTP/x.y" (a TLS handshake on the plain port)
   * is logged whole as the method, with an empty target and protocol.
   * @param {import('node:net').Socket} socket
   * @param {number} status the status answered
   * @param {string|null} requestLine the raw first line as latin1, null when unknown
   * @param {number} bytes body bytes of the answer
   */
  logRejected (socket, status, requestLine, bytes) {
    if (!this.wanted) return
    const line = requestLine === null ? '-' : requestLine
    const parts = REQUEST_LINE.exec(line)
    const entry = parts === null
      ? new RejectedEntry(socket, line, '', '')
      : new RejectedEntry(socket, parts[1], parts[2], 'HTTP/' + parts[3])
    entry.worker = this.worker
    entry.status = status
    entry.bytes = bytes
    this.report(entry)
  }
}

// The entry of a request that Node's parser refused: the fields of an
// AccessEntry (lib/logging/format.js) that such a request has.
class RejectedEntry {
  constructor (socket, method, target, protocol) {
    this.time = Date.now()
    this.clientAddress = socketAddresses(socket).remote
    this.authUser = null
    this.method = method
    this.originalUrl = target
    this.protocol = protocol
    this.status = 0
    this.bytes = 0
    this.referer = undefined
    this.userAgent = undefined
    this.duration = 0
    this.requestId = newRequestId()
    this.worker = 'single'
    this.completed = true
    this.upstream = null
    this.upstreamTime = -1
    this.rateLimit = null
  }
}

const REQUEST_LINE = /^(\S+) (\S+) HTTP\/(\d\.\d)$/

module.exports = { AccessLog }
