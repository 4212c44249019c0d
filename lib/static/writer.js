'use strict'

const path = require('node:path')
const mime = require('mime-types')
const send = require('send')
const { compileCacheControl } = require('./cache-control')
const { sendCoded, sendCodedBody } = require('./coded-response')
const { strongEtag } = require('./etag')
const { statusForFsError } = require('./fs-errors')
const { StreamResponse } = require('../http2/stream-response')
const { promote, onBareStream } = require('../http2/promote')
const { headForWrappers, writeHeadWrapped } = require('../pipeline/request/tolerant-response')

// send hands its options to fs.createReadStream: big files go in fewer,
// larger reads and socket writes than the 64 KiB default.
const READ_CHUNK_BYTES = 256 * 1024
const VARIES_BY_ENCODING = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i
// Whether the writer set Cache-Control on the response a send stream writes,
// and the request context that stream answers.
const kCacheControl = Symbol('svr.static.cacheControl')
const kContext = Symbol('svr.static.context')

/**
 * The one writer of static files: sends a Representation of the file store
 * (lib/file-store). The identity file read from disk goes through `send`
 * (conditional requests, ranges, HEAD); a body held in memory is written
 * at once; a coded one from a sidecar or an encoder by
 * lib/static/coded-response.js. A refusal becomes the error page.
 * @param {object} config
 * @param {{respond: object, log: object}} shared
 * @returns {{write: (ctx, rep: import('../file-store/representation').Representation) => void,
 *   refuse: (ctx, status: number, err: Error|null) => void}} ctx: the request's context
 */
function createWriter (config, { respond, log }) {
  const cacheControlFor = compileCacheControl(config.cacheControl)
  const etags = config.enableETag
  // send's `public, max-age=0` and weak ETag stay off: the writer sets
  // Cache-Control from the rules and a strong ETag itself. Index files and
  // dotfiles are settled before send sees a path.
  const sendOptions = Object.freeze({ acceptRanges: true, cacheControl: false, etag: false, lastModified: true, highWaterMark: READ_CHUNK_BYTES })

  function fail (ctx, status, err, setCacheControl) {
    const { req, res } = ctx
    // A cacheable error page could outlive the file's repair by a year.
    if (setCacheControl) res.removeHeader('Cache-Control')
    if (status >= 500 && err !== null) log.error(req.method + ' ' + req.url + ' failed:', err)
    respond.sendError(ctx, status, {
      headers: err !== null ? err.headers : undefined,
      error: status >= 500 && err !== null ? err : undefined
    })
  }

  // `this` is the send stream: a listener shared by every request.
  function onSendError (err) {
    const status = typeof err.code === 'string' ? statusForFsError(err) : err.status || 500
    fail(this[kContext], status, err, this[kCacheControl])
  }

  function sendIdentity (ctx, rep, setCacheControl) {
    const { req, res } = ctx
    const stream = send(req, rep.urlPath, sendOptions)
    // send's public send(path, stat) transfers a file stat'ed already. It
    // writes to `res`, which pipe() would set before stat'ing it once more.
    stream.res = res
    stream[kCacheControl] = setCacheControl
    stream[kContext] = ctx
    if (res instanceof StreamResponse) stream.stream = sendToStream
    stream.on('error', onSendError)
    if (etags) stream.on('headers', setStrongEtag)
    if (writeHeadWrapped(res)) stream.on('stream', sendHeadOfSend)
    stream.send(rep.file, rep.stat)
  }

  function sendInCoding (ctx, rep, setCacheControl) {
    if (rep.body !== null) {
      const status = sendCodedBody(ctx.req, ctx.res, rep, etags)
      if (status !== 0) fail(ctx, status, null, setCacheControl)
      return
    }
    // A body streamed through an encoder needs a Writable; promote moves the
    // context to Node's objects.
    if (onBareStream(ctx.req)) promote(ctx.req, ctx.res)
    sendCoded(ctx.req, ctx.res, rep, etags).then((status) => {
      if (status !== 0) fail(ctx, status, null, setCacheControl)
    }, (err) => fail(ctx, 500, err, setCacheControl))
  }

  /**
   * @param {import('../pipeline/request/context').RequestContext} ctx of a GET or HEAD
   * @param {import('../file-store/representation').Representation} rep
   */
  function write (ctx, rep) {
    if (rep.status !== 0) {
      fail(ctx, rep.status, rep.error, false)
      return
    }
    const { req, res } = ctx
    res.setHeader('X-Content-Type-Options', 'nosniff')
    const cacheControl = cacheControlFor === null ? null : cacheControlFor(rep.urlPath)
    if (cacheControl !== null) res.setHeader('Cache-Control', cacheControl)
    if (rep.negotiable !== null) addVary(res)
    if (rep.coding !== null) sendInCoding(ctx, rep, cacheControl !== null)
    else if (rep.body !== null) sendHeld(req, res, rep, etags)
    else sendIdentity(ctx, rep, cacheControl !== null)
  }

  // A 404 costs no representation.
  function refuse (ctx, status, err) {
    fail(ctx, status, err, false)
  }

  return { write, refuse }
}

// The whole 200 that send would write for a request without ranges or
// preconditions, in the same header order, from memory.
function sendHeld (req, res, rep, etags) {
  const headers = rep.held.headers || heldHeaders(rep.held, rep.file)
  if (etags) res.setHeader('ETag', headers.etag)
  if (!res.getHeader('Accept-Ranges')) res.setHeader('Accept-Ranges', 'bytes')
  if (!res.getHeader('Last-Modified')) res.setHeader('Last-Modified', headers.lastModified)
  if (!res.getHeader('Content-Type')) res.setHeader('Content-Type', headers.type)
  res.setHeader('Content-Length', rep.body.length)
  headForWrappers(res)
  if (req.method === 'HEAD') res.end()
  else res.end(rep.body)
}

// send has set the status and fields and is about to pipe the file.
// `this` is the send stream.
function sendHeadOfSend () {
  headForWrappers(this.res)
}

// Replaces SendStream#stream for an HTTP/2 stream: send has settled the
// status and headers (200 or 206, Content-Range, Content-Length), and the
// bytes go straight into the HTTP/2 stream (StreamResponse#sendFile)
// instead of through Node's compat response. `this` is the send stream; an
// open error is its error.
function sendToStream (file, range) {
  const length = Number(this.res.getHeader('Content-Length'))
  this.res.sendFile(file, range.start, length, (err) => this.emit('error', err))
}

// Header values of a held body, computed once for the entry.
function heldHeaders (entry, file) {
  entry.headers = {
    etag: strongEtag(entry.stat, ''),
    lastModified: entry.stat.mtime.toUTCString(),
    type: mime.contentType(path.extname(file)) || 'application/octet-stream'
  }
  return entry.headers
}

// A 'headers' listener of send: the strong tag replaces send's weak one,
// early enough for send's own conditional and If-Range checks to use it.
function setStrongEtag (res, file, stat) {
  res.setHeader('ETag', strongEtag(stat, ''))
}

/**
 * Add Accept-Encoding to Vary, keeping what customHeaders put there.
 * @param {import('node:http').ServerResponse} res
 */
function addVary (res) {
  const vary = res.getHeader('Vary')
  if (vary === undefined) {
    res.setHeader('Vary', 'Accept-Encoding')
  } else if (!VARIES_BY_ENCODING.test(String(vary))) {
    res.setHeader('Vary', vary + ', Accept-Encoding')
  }
}

module.exports = { createWriter }
