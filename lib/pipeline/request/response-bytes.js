'use strict'

const { performance } = require('node:perf_hooks')

// A response's request context (lib/pipeline/request/context.js).
const kContext = Symbol('svr.context')
// On the prototype of a response class that marks its end itself, from
// _finish (lib/pipeline/request/tolerant-response.js): its responses need
// no 'prefinish' listener, which costs every response an add and a call.
const kMarksEnd = Symbol('svr.marksEnd')
// The client went away before the response was started (nginx's number).
const CLIENT_CLOSED = 499
// A field of a response class that calls it as the response closes,
// before its 'close' listeners (lib/http2/stream-response.js): null until
// the access log puts its report there, which then costs no listener.
const kOnClose = Symbol('svr.onClose')

/**
 * Have the access log report the request once its response is over
 * ('close'), with what the response sent. Over HTTP/1.x the body bytes are
 * what the connection's bytesWritten grew by while the response had it,
 * less the head (countHttp1Bytes); over HTTP/2 the response class counts
 * them (countBodyBytes).
 * @param {import('./context').RequestContext} ctx
 * @param {import('../../logging/access-log').AccessLog} accessLog
 */
function reportWhenOver (ctx, accessLog) {
  const { req, res } = ctx
  ctx.worker = accessLog.worker
  ctx.log = accessLog
  // performance.now() checks its receiver's brand with hasOwnProperty on
  // every call, a slow builtin; the combined log without metrics never
  // reads the duration.
  if (accessLog.wantsDuration) ctx.start = performance.now()
  if (req.httpVersionMajor !== 2) watchConnection(ctx, req.socket, res)
  // 'close' comes exactly once, when the response is over or the
  // connection gone; `on` spares the wrapper `once` allocates.
  if (res[kOnClose] === null) res[kOnClose] = finishContext
  else res.on('close', finishContext)
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
      const ctx = this[kContext]
      if (ctx !== undefined && ctx.log !== null) ctx.bytes += chunkLength(chunk, encoding)
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
  const ctx = res[kContext]
  if (ctx !== undefined && ctx.log !== null) ctx.bytes += bytes
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
 * @param {import('./context').RequestContext} ctx
 * @param {import('node:net').Socket} socket
 * @param {import('node:http').ServerResponse} res
 */
function watchConnection (ctx, socket, res) {
  ctx.socket = socket
  if (res.socket === socket) ctx.sentBefore = connectionBytes(socket)
  else res.once('socket', markStart)
  if (res[kMarksEnd] !== true) res.on('prefinish', markEnd)
}

// Both marks may come after 'close' (an application that ends a response
// whose client has gone), when the count is over and the socket let go.
function markStart () {
  const ctx = this[kContext]
  if (ctx.socket !== null) ctx.sentBefore = connectionBytes(ctx.socket)
}

function markEnd () {
  markResponseEnd(this)
}

/**
 * Mark the end of an HTTP/1.x response in its connection's count, as it
 * hands over its last byte: for a response class with kMarksEnd.
 * @param {object} res
 */
function markResponseEnd (res) {
  const ctx = res[kContext]
  if (ctx !== undefined && ctx.socket !== null) ctx.sentAfter = connectionBytes(ctx.socket)
}

/**
 * The connection's bytesWritten. Node's getter copies the socket's write
 * queue into a new array and iterates it whenever it is read, and every
 * HTTP/1.x response reads it twice; with nothing queued or held for the
 * connection (between two answers, and after a small one has left) it is
 * the count of bytes handed to the system, which the socket keeps as a
 * number (`_bytesDispatched`, a private interface: without it, the getter).
 * @param {import('node:net').Socket} socket
 * @returns {number}
 */
function connectionBytes (socket) {
  const dispatched = socket._bytesDispatched
  if (typeof dispatched === 'number' && socket.writableLength === 0 && socket._pendingData === null) return dispatched
  return socket.bytesWritten
}

/**
 * The body bytes of an HTTP/1.x response as nginx's $body_bytes_sent counts
 * them: every byte on the connection after the head, so the chunk-size lines
 * and the last chunk of a chunked body count too (Apache's %b counts the
 * content without that framing). A response cut short counts what was handed
 * to the connection before it closed. Interim 1xx responses a script sends
 * count as body.
 * @param {import('./context').RequestContext} ctx
 * @param {import('node:http').ServerResponse} res
 * @returns {number}
 */
function countHttp1Bytes (ctx, res) {
  const { socket, sentBefore } = ctx
  if (sentBefore === -1 || !res.headersSent) return 0
  // A finished response ends at its mark: the next one on the connection
  // may have written since. An unfinished one was the connection's last
  // (the next is assigned only when this one finishes): it ends where the
  // closed connection stopped counting, queued bytes it dropped excluded.
  // (Node's bytesWritten copies the connection's write queue each time it
  // is read: a finished response, the usual case, does without it.)
  const { sentAfter } = ctx
  let end = sentAfter
  if (sentAfter === -1 || !res.writableFinished) {
    const now = socket.bytesWritten
    if (sentAfter === -1 || now <= sentAfter) end = now
  }
  // The head is latin1, one byte per character.
  return Math.max(0, end - sentBefore - res._header.length)
}

// 'close' of a response whose request the access log reports.
function finishContext () {
  const ctx = this[kContext]
  // A reload may have turned the metrics on while the request ran: it then
  // has the wall clock's duration, in whole milliseconds.
  if (ctx.log.wantsDuration) ctx.duration = ctx.start === -1 ? Date.now() - ctx.time : performance.now() - ctx.start
  // Node before 24 emits 'finish' also when writing the last chunk failed
  // because the client hung up; the connection's error tells such a body
  // was not all sent.
  ctx.completed = this.writableFinished && (ctx.socket === null || ctx.socket.errored === null)
  ctx.status = !this.headersSent && !ctx.completed ? CLIENT_CLOSED : this.statusCode
  // In place of the request counters' own 'finish' listener (RequestStats#countRequest).
  if (this.writableFinished && ctx.log.stats !== null) ctx.log.stats.countFinished(this.statusCode)
  if (ctx.socket !== null) ctx.bytes = countHttp1Bytes(ctx, this)
  // Node drops the body of a HEAD, 1xx, 204 or 304 response, whatever was written.
  else if (!hasBody(ctx.method, ctx.status)) ctx.bytes = 0
  const { headers } = ctx.req
  ctx.referer = headers.referer
  ctx.userAgent = headers['user-agent']
  // The connection may carry more requests; this one no longer needs it.
  ctx.socket = null
  ctx.log.report(ctx)
}

function hasBody (method, status) {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304
}

module.exports = { kContext, kMarksEnd, kOnClose, markResponseEnd, reportWhenOver, countBodyBytes, countSentBytes, connectionBytes, CLIENT_CLOSED }
