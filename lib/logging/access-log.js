'use strict'

const { performance } = require('node:perf_hooks')
const { socketAddresses } = require('../util/vhost')
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
   * report the request once its response is over ('close'). The body bytes
   * are counted by the response classes (countBodyBytes).
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
    // 'close' comes exactly once, when the response is over or the
    // connection gone; `on` spares the wrapper `once` allocates.
    res.on('close', finishExchange)
  }

  /**
   * Log a request that Node's parser refused and that never reached the
   * pipeline (lib/client-error.js answers it on the raw socket), so scanners
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
 * Make a response class count the body bytes written to it, for the
 * exchange observe() attached: everything the application, `send` or a
 * compression stream writes passes through write and end, so the count is
 * of the bytes actually sent, compressed or not. Counting in the class (the
 * ServerResponse the server is created with) rather than replacing the
 * methods of each response costs nothing per request.
 * @template {new (...args: any[]) => object} T
 * @param {T} Base http.ServerResponse or a subclass of Http2ServerResponse
 * @returns {T}
 */
function countBodyBytes (Base) {
  return class extends Base {
    write (chunk, encoding) {
      const exchange = this[kExchange]
      if (exchange !== undefined) exchange.bytes += chunkLength(chunk, encoding)
      return super.write.apply(this, arguments)
    }

    end (chunk, encoding) {
      const exchange = this[kExchange]
      if (exchange !== undefined && typeof chunk !== 'function') exchange.bytes += chunkLength(chunk, encoding)
      return super.end.apply(this, arguments)
    }
  }
}

function chunkLength (chunk, encoding) {
  if (chunk === undefined || chunk === null) return 0
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding : 'utf8')
  return typeof chunk.byteLength === 'number' ? chunk.byteLength : 0
}

function finishExchange () {
  const exchange = this[kExchange]
  const { req, ctx } = exchange
  exchange.duration = performance.now() - exchange.start
  exchange.completed = this.writableFinished
  exchange.status = !this.headersSent && !exchange.completed ? CLIENT_CLOSED : this.statusCode
  // Node drops the body of a HEAD, 1xx, 204 or 304 response, whatever was written.
  if (!hasBody(exchange.method, exchange.status)) exchange.bytes = 0
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

module.exports = { AccessLog, countBodyBytes, attachContext, requestIdOf, CLIENT_CLOSED }
