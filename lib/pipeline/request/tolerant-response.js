'use strict'

const http = require('node:http')
const { contextOfResponse } = require('./context')
const { kMarksEnd, markResponseEnd } = require('./response-bytes')
const { withKnownFields } = require('./known-fields')

/**
 * SVR.JS let a second `res.writeHead` pass with a warning: 3.x code that
 * answers twice (a script that forgot `return`, a mod that writes a header
 * after its handler answered) must not have Node throw ERR_HTTP_HEADERS_SENT
 * at it. svr does this in the response classes its servers are created
 * with, not by replacing `res.writeHead` on each response: mods that wrap
 * `writeHead` (caching, compression and header mods do) then always wrap
 * the class's method, however many of them there are and in whatever
 * order, and a wrapper never ends up calling itself through a shim
 * installed again after it.
 * @param {import('node:http').ServerResponse} res
 * @param {number} statusCode
 * @returns {boolean} whether the call is to be ignored (headers already sent
 *   by a request of the pipeline, whose log takes the warning)
 */
function ignoreSecondWriteHead (res, statusCode) {
  if (!res.headersSent) return false
  const ctx = contextOfResponse(res)
  // svr's own answers before the pipeline (413, 417) keep Node's error.
  if (ctx === null || !ctx.inPipeline) return false
  ctx.shared.log.warn('request ' + ctx.requestId + ': writeHead(' + statusCode +
    ') after the headers were sent is ignored, as SVR.JS did')
  return true
}

/**
 * Whether application code has put a writeHead of its own on this
 * response, in front of the class's. Asked of every answer, so by reading
 * the method, which compiled code does with a check of the response's
 * shape: Object.hasOwn searches the response's forty-odd own fields.
 * @param {object} res
 * @returns {boolean}
 */
function writeHeadWrapped (res) {
  return res.writeHead !== Object.getPrototypeOf(res).writeHead
}

/**
 * Whether application code has put an end of its own on this response, in
 * front of the class's; read as writeHeadWrapped reads writeHead.
 * @param {object} res
 * @returns {boolean}
 */
function endWrapped (res) {
  return res.end !== Object.getPrototypeOf(res).end
}

/**
 * SVR.JS wrote the status line of every answer with writeHead before its
 * body, and mods that wrap the response rely on it: svrjs-cache-mod, for
 * one, decides in its end() wrapper whether to cache, from the fields its
 * writeHead wrapper saw. svr's stages after the mods set their fields one
 * by one and leave the status line to Node, which would write it only
 * inside the innermost end(), after every wrapper's end() has run. So
 * where a stage is about to send a body, a response that application code
 * wrapped gets its writeHead first, with every field, as SVR.JS gave it.
 * One property check for a response nobody wrapped.
 * @param {import('node:http').ServerResponse} res
 */
function headForWrappers (res) {
  if (!res.headersSent && writeHeadWrapped(res)) res.writeHead(res.statusCode, res.getHeaders())
}

/**
 * The HTTP/1.1 response of svr's servers (and of upgrade requests).
 */
class SvrServerResponse extends withKnownFields(http.ServerResponse) {
  writeHead (statusCode, reason, headers) {
    if (ignoreSecondWriteHead(this, statusCode)) return this
    return super.writeHead(statusCode, reason, headers)
  }

  // Node writes the header of an answer that never called writeHead (svr's
  // static files and error pages set their fields one by one) through
  // `this.writeHead(statusCode)`. SVR.JS called writeHead with the fields
  // for every answer, and mods written for it wrap writeHead expecting
  // them (svrjs-cache-mod takes Object.keys of the argument, and caches
  // the fields it is given), so a wrapped response gets them too. Only
  // then: the copy costs an object and a second setHeader per field.
  _implicitHeader () {
    if (writeHeadWrapped(this)) headForWrappers(this)
    else super._implicitHeader()
  }

  // Node's _finish emits 'prefinish' once the last byte is handed to the
  // connection: where the access log's byte count of the response ends.
  _finish () {
    markResponseEnd(this)
    super._finish()
  }
}

SvrServerResponse.prototype[kMarksEnd] = true

// What a response object has of its own, from http.ServerResponse and
// svr's classes: an own property of one of these names is application code
// standing in front of the method.
const RESPONSE_METHODS = ['writeHead', 'write', 'end', 'setHeader', 'setHeaders', 'appendHeader', 'getHeader',
  'getHeaders', 'getHeaderNames', 'hasHeader', 'removeHeader', 'flushHeaders', 'writeContinue',
  'writeEarlyHints', 'writeProcessing', 'addTrailers', 'cork', 'uncork', 'setTimeout', 'destroy',
  'assignSocket', 'detachSocket', 'on', 'once', 'emit', '_implicitHeader', '_send', '_writeRaw', '_finish']

/**
 * Take away every method that application code put on the response object
 * itself, so the class's own methods answer again. For the error page of a
 * request whose mod wrapped the response and then failed inside its
 * wrapper: that page must not go through the wrapper that failed.
 * @param {object} res
 * @returns {string[]} the names taken away
 */
function unwrapResponse (res) {
  const removed = []
  for (const name of RESPONSE_METHODS) {
    if (Object.hasOwn(res, name) && typeof res[name] === 'function') {
      delete res[name]
      removed.push(name)
    }
  }
  return removed
}

module.exports = { SvrServerResponse, ignoreSecondWriteHead, writeHeadWrapped, endWrapped, headForWrappers, unwrapResponse }
