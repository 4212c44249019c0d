'use strict'

const { performance } = require('node:perf_hooks')
const { socketAddresses } = require('../util/vhost')
const { newRequestId, acceptableRequestId, HEADER } = require('./request-id')

const kExchange = Symbol('svr.exchange')
// The client went away before the response was started (nginx's number).
const CLIENT_CLOSED = 499
const PROTOCOLS = { '1.1': 'HTTP/1.1', '1.0': 'HTTP/1.0', '2.0': 'HTTP/2.0' }

// What this process does with a finished request; set at boot (and on a
// single-process reload) by lib/logging/index.js and lib/metrics.
const state = {
  format: null,
  sink: null,
  worker: 'single',
  observer: null,
  // Body bytes of every response observed, for the status page.
  bytesSent: 0
}

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
    this.worker = state.worker
    this.completed = false
    this.write = null
    this.end = null
  }
}

/**
 * Give the request its id (sent back as X-Request-Id at once, so every
 * answer carries it) and, when the access log or the metrics want it, count
 * the body bytes and report the request once its response is over.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
function observeRequest (req, res) {
  const exchange = new Exchange(req, res, newRequestId())
  req[kExchange] = exchange
  res.setHeader(HEADER, exchange.requestId)
  if (state.sink === null && state.observer === null) return
  res[kExchange] = exchange
  exchange.write = res.write
  exchange.end = res.end
  res.write = countingWrite
  res.end = countingEnd
  // 'close' comes exactly once, when the response is over or the
  // connection gone; `on` spares the wrapper `once` allocates.
  res.on('close', finishExchange)
}

// Shared by every response (no closure per request): everything the
// application, `send` or a compression stream writes passes through here,
// so the count is of the bytes actually sent, compressed or not.
function countingWrite (chunk, encoding) {
  const exchange = this[kExchange]
  exchange.bytes += chunkLength(chunk, encoding)
  return exchange.write.apply(this, arguments)
}

function countingEnd (chunk, encoding) {
  const exchange = this[kExchange]
  if (typeof chunk !== 'function') exchange.bytes += chunkLength(chunk, encoding)
  return exchange.end.apply(this, arguments)
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
  }
  exchange.referer = req.headers.referer
  exchange.userAgent = req.headers['user-agent']
  state.bytesSent += exchange.bytes
  if (state.sink !== null) state.sink.write(state.format(exchange))
  if (state.observer !== null) state.observer(exchange)
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
function logRejectedRequest (socket, status, requestLine, bytes) {
  if (state.sink === null && state.observer === null) return
  const line = requestLine === null ? '-' : requestLine
  const parts = REQUEST_LINE.exec(line)
  const req = parts === null
    ? new RejectedRequest(socket, line, '', '')
    : new RejectedRequest(socket, parts[1], parts[2], parts[3])
  const exchange = new Exchange(req, null, newRequestId())
  if (parts === null) exchange.protocol = ''
  exchange.status = status
  exchange.bytes = bytes
  exchange.completed = true
  if (state.sink !== null) state.sink.write(state.format(exchange))
  if (state.observer !== null) state.observer(exchange)
}

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

/**
 * @returns {number|null} body bytes sent so far, null when responses are not
 *   observed (neither the access log nor the metrics are on)
 */
function bytesSent () {
  return state.sink === null && state.observer === null ? null : state.bytesSent
}

/**
 * @param {{format?: Function|null, sink?: object|null, worker?: string, observer?: Function|null}} changes
 */
function setAccessLogState (changes) {
  Object.assign(state, changes)
}

module.exports = { observeRequest, attachContext, requestIdOf, logRejectedRequest, bytesSent, setAccessLogState, CLIENT_CLOSED }
