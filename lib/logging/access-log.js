'use strict'

const { performance } = require('node:perf_hooks')
const { socketAddresses } = require('../hosts/vhost')
const { newRequestId, acceptableRequestId, HEADER } = require('./request-id')

const kExchange = Symbol('svr.exchange')
// The client went away before the response was started (nginx's number).
const CLIENT_CLOSED = 499
const PROTOCOLS = { '1.1': 'HTTP/1.1', '1.0': 'HTTP/1.0', '2.0': 'HTTP/2.0' }

/**
 * One request and its response: the request id, and what the access log
 * line and the metrics need once the response is over. It doubles as the
 * log entry, so a request costs one object besides its line.
 */
class Exchange {
  constructor (req, res, requestId) {
    this.req = req
    this.res = res
    this.ctx = null
    this.requestId = requestId
    this.start = performance.now()
    this.time = Date.now()
    this.address = socketAddresses(req.socket).remote
    this.user = null
    this.method = req.method
    this.target = req.url
    this.protocol = PROTOCOLS[req.httpVersion] || 'HTTP/' + req.httpVersion
    this.status = 0
    this.bytes = 0
    // HTTP/1.x: the connection, and its bytesWritten when this response got
    // it and when its last byte was handed to it (-1 until then).
    this.socket = null
    this.sentBefore = -1
    this.sentAfter = -1
    this.referer = undefined
    this.userAgent = undefined
    this.duration = 0
    this.worker = 'single'
    // A proxied request's upstream, and ms from its first attempt to the end (lib/proxy).
    this.upstream = null
    this.upstreamTime = -1
    this.completed = false
    // The access log that reports it, null while nobody wants it.
    this.log = null
  }
}

/**
 * What one worker does with its finished requests: a line to the access
 * log's sink, the metrics' observer, and the body bytes for the status page.
 * Each worker's runtime holds one; a reload reconfigures it.
 */
class AccessLog {
  /**
   * @param {string} worker the worker slot, or "single", for the log lines
   */
  constructor (worker) {
    this.worker = worker
    this.format = null
    this.sink = null
    this.observer = null
    // Body bytes of every response observed, for the status page.
    this.sent = 0
  }

  /**
   * @param {{format?: Function|null, sink?: object|null, observer?: Function|null}} changes
   */
  configure (changes) {
    Object.assign(this, changes)
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

  report (exchange) {
    this.sent += exchange.bytes
    if (this.sink !== null) this.sink.write(this.format(exchange))
    if (this.observer !== null) this.observer(exchange)
  }

  /**
   * Give the request its id (sent back as X-Request-Id at once, so every
   * answer carries it) and, when the access log or the metrics want it,
   * report the request once its response is over ('close'). Over HTTP/1.x
   * the body bytes are what the connection's bytesWritten grew by while the
   * response had it, less the head (see countHttp1Bytes).
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  observe (req, res) {
    const exchange = new Exchange(req, res, newRequestId())
    req[kExchange] = exchange
    res.setHeader(HEADER, exchange.requestId)
    if (!this.wanted) return
    exchange.worker = this.worker
    exchange.log = this
    res[kExchange] = exchange
    if (req.httpVersionMajor !== 2) watchConnection(exchange, req.socket, res)
    // 'close' comes exactly once, when the response is over or the
    // connection gone; `on` spares the wrapper `once` allocates.
    res.on('close', finishExchange)
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
    const req = parts === null
      ? new RejectedRequest(socket, line, '', '')
      : new RejectedRequest(socket, parts[1], parts[2], parts[3])
    const exchange = new Exchange(req, null, newRequestId())
    if (parts === null) exchange.protocol = ''
    exchange.worker = this.worker
    exchange.status = status
    exchange.bytes = bytes
    exchange.completed = true
    this.report(exchange)
  }
}

/**
 * Make an HTTP/2 response class count the body bytes written to it. Node
 * counts nothing per HTTP/2 stream that a listener could read: the session's
 * socket carries every stream at once, and the per-stream DATA byte counts of
 * perf_hooks' 'http2' entries arrive later, without the session they belong
 * to. So over HTTP/2 the count is of what the application, `send` or a
 * compression stream hands the stream, in the class the server is created
 * with (no wrapper per response). HTTP/1.x responses are counted on their
 * connection instead (watchConnection).
 * Only write() is counted: Http2ServerResponse's end() hands its chunk to
 * write().
 * @template {new (...args: any[]) => object} T
 * @param {T} Base a subclass of Http2ServerResponse
 * @returns {T}
 */
function countBodyBytes (Base) {
  return class extends Base {
    write (chunk, encoding) {
      const exchange = this[kExchange]
      if (exchange !== undefined) exchange.bytes += chunkLength(chunk, encoding)
      return super.write.apply(this, arguments)
    }
  }
}

/**
 * Count body bytes of a response that is not one of the counting classes
 * (the HTTP/2 stream response, lib/http2/stream-response.js).
 * @param {object} res
 * @param {number} bytes
 */
function countSentBytes (res, bytes) {
  const exchange = res[kExchange]
  if (exchange !== undefined) exchange.bytes += bytes
}

/**
 * Hand a request's exchange over to the request and response that replace
 * the ones it was observed on (lib/http2/promote.js): the id, the byte count
 * and the report at 'close' go with them.
 * @param {object} req the request observed
 * @param {object} res its response, whose 'close' listeners the caller moves
 * @param {object} nextReq
 * @param {object} nextRes
 */
function moveExchange (req, res, nextReq, nextRes) {
  const exchange = req[kExchange]
  if (exchange === undefined) return
  nextReq[kExchange] = exchange
  exchange.req = nextReq
  if (exchange.res === res) exchange.res = nextRes
  if (res[kExchange] !== undefined) nextRes[kExchange] = exchange
}

function chunkLength (chunk, encoding) {
  if (chunk === undefined || chunk === null) return 0
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding : 'utf8')
  return typeof chunk.byteLength === 'number' ? chunk.byteLength : 0
}

/**
 * Mark where an HTTP/1.x response starts and ends in its connection's
 * bytesWritten (which counts every byte handed to the socket, sent or still
 * queued). A response has the connection from the moment Node assigns it
 * (at once, or for a pipelined request when the responses before it are
 * done: the 'socket' event) until its last byte is handed over ('prefinish').
 * Its 'close' comes a tick after that, when the next response on a kept-alive
 * connection may already have written, so the end is marked at 'prefinish'.
 * @param {Exchange} exchange
 * @param {import('node:net').Socket} socket
 * @param {import('node:http').ServerResponse} res
 */
function watchConnection (exchange, socket, res) {
  exchange.socket = socket
  if (res.socket === socket) exchange.sentBefore = socket.bytesWritten
  else res.once('socket', markStart)
  res.on('prefinish', markEnd)
}

function markStart () {
  const exchange = this[kExchange]
  exchange.sentBefore = exchange.socket.bytesWritten
}

function markEnd () {
  const exchange = this[kExchange]
  exchange.sentAfter = exchange.socket.bytesWritten
}

/**
 * The body bytes of an HTTP/1.x response as nginx's $body_bytes_sent counts
 * them: every byte on the connection after the head, so the chunk-size lines
 * and the last chunk of a chunked body count too (Apache's %b counts the
 * content without that framing). A response cut short counts what was handed
 * to the connection before it closed. Interim 1xx responses a script sends
 * count as body.
 * @param {Exchange} exchange
 * @param {import('node:http').ServerResponse} res
 * @returns {number}
 */
function countHttp1Bytes (exchange, res) {
  const { socket, sentBefore } = exchange
  if (sentBefore === -1 || !res.headersSent) return 0
  // A finished response ends at its mark: the next one on the connection
  // may have written since. An unfinished one was the connection's last
  // (the next is assigned only when this one finishes): it ends where the
  // closed connection stopped counting, queued bytes it dropped excluded.
  let end = socket.bytesWritten
  if (exchange.sentAfter !== -1 && (res.writableFinished || exchange.sentAfter < end)) end = exchange.sentAfter
  // The head is latin1, one byte per character.
  return Math.max(0, end - sentBefore - res._header.length)
}

function finishExchange () {
  const exchange = this[kExchange]
  const { req, ctx } = exchange
  exchange.duration = performance.now() - exchange.start
  exchange.completed = this.writableFinished
  exchange.status = !this.headersSent && !exchange.completed ? CLIENT_CLOSED : this.statusCode
  if (exchange.socket !== null) exchange.bytes = countHttp1Bytes(exchange, this)
  // Node drops the body of a HEAD, 1xx, 204 or 304 response, whatever was written.
  else if (!hasBody(exchange.method, exchange.status)) exchange.bytes = 0
  if (ctx !== null) {
    exchange.address = ctx.clientAddress
    exchange.user = ctx.authUser
    exchange.upstream = ctx.upstream
    exchange.upstreamTime = ctx.upstreamTime
  }
  exchange.referer = req.headers.referer
  exchange.userAgent = req.headers['user-agent']
  exchange.log.report(exchange)
  exchange.req = null
  exchange.res = null
  exchange.ctx = null
  exchange.socket = null
}

function hasBody (method, status) {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304
}

// A rejected request has no IncomingMessage; this stands in for one.
class RejectedRequest {
  constructor (socket, method, target, protocol) {
    this.socket = socket
    this.method = method
    this.url = target
    this.httpVersion = protocol
    this.headers = {}
  }
}

const REQUEST_LINE = /^(\S+) (\S+) HTTP\/(\d\.\d)$/

/**
 * Link the request's context to its exchange, adopt a trusted proxy's
 * X-Request-Id, and return the request's id. A proxy's id is taken only
 * when `ctx.fromTrustedProxy` is already true at this point.
 * @param {import('node:http').IncomingMessage} req
 * @param {object} ctx the new request context
 * @returns {string}
 */
function attachContext (req, ctx) {
  const exchange = req[kExchange]
  if (exchange === undefined) return newRequestId()
  exchange.ctx = ctx
  if (ctx.fromTrustedProxy === true) {
    const forwarded = acceptableRequestId(req.headers['x-request-id'])
    if (forwarded !== null && exchange.res !== null && !exchange.res.headersSent) {
      exchange.requestId = forwarded
      exchange.res.setHeader(HEADER, forwarded)
    }
  }
  return exchange.requestId
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {string|null} the request's id, null for a request svr did not observe
 */
function requestIdOf (req) {
  const exchange = req[kExchange]
  return exchange === undefined ? null : exchange.requestId
}

module.exports = { AccessLog, countBodyBytes, countSentBytes, moveExchange, attachContext, requestIdOf, CLIENT_CLOSED }
