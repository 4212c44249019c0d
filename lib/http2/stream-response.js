'use strict'

const { EventEmitter } = require('node:events')
const fs = require('node:fs')
const { pipeline } = require('node:stream')
const { validateHeaderValue } = require('node:http')
const { sendsLength, bodyLength } = require('./compat')
const { knownName, lowerCaseName, FieldTable } = require('../util/header-names')
const { countSentBytes, kOnClose } = require('../pipeline/request/response-bytes')

const kResponse = Symbol('svr.http2.response')
const NO_ERROR = 0
// A file is read into the stream in chunks of the size of the stream's
// initial flow-control window: one read fills what the client lets through.
const FILE_CHUNK_BYTES = 64 * 1024

/**
 * The answer interface of svr's own stages on an HTTP/2 stream: the part of
 * http.ServerResponse they use (statusCode, the header methods, end,
 * destroy, 'finish' and 'close'), sent with one header object
 * (`stream.respond`) and one `stream.end(body)`, or a file from disk read
 * into the stream. Node's Http2ServerResponse, a Writable with its own
 * header bookkeeping per request, is made only when application code needs
 * it (lib/http2/promote.js). Like svr's subclass of it, it drops the
 * connection-specific headers HTTP/1.1 code sets.
 */
class StreamResponse extends EventEmitter {
  /**
   * @param {import('node:http2').ServerHttp2Stream} stream
   * @param {string} method the request's
   * @param {import('./streams').OpenStreams|null} openStreams its
   *   session's open streams (lib/http2/streams.js), null when none are counted
   */
  constructor (stream, method, openStreams = null) {
    super()
    this.stream = stream
    this.method = method
    this.statusCode = 200
    // Lower-case names, as Http2ServerResponse keeps them; what respond() sends.
    this.headers = new FieldTable()
    this.headersSent = false
    this.writableEnded = false
    this.writableFinished = false
    // Meaningless on a stream; stages set it for HTTP/1.1 connections.
    this.shouldKeepAlive = true
    // The full response made from this one, which answers from then on.
    this.promoted = false
    this.openStreams = openStreams
    // The access log's report, called as the response closes (reportWhenOver).
    this[kOnClose] = null
    if (openStreams !== null) openStreams.opened()
    stream[kResponse] = this
    // A stream reset by the client emits 'error'; the response's 'close'
    // tells the access log.
    stream.on('error', ignoreError)
    stream.on('close', onStreamClose)
  }

  get destroyed () {
    return this.stream.destroyed
  }

  setHeader (name, value) {
    const known = knownName(name)
    if (known.connectionSpecific) return this
    if (typeof value !== 'number' && value !== known.valid) {
      validateHeaderValue(name, value)
      if (typeof value === 'string') known.remember(value)
    }
    this.headers[known.lower] = value
    return this
  }

  getHeader (name) {
    return this.headers[lowerCaseName(name)]
  }

  hasHeader (name) {
    return this.headers[lowerCaseName(name)] !== undefined
  }

  removeHeader (name) {
    delete this.headers[lowerCaseName(name)]
  }

  getHeaderNames () {
    return Object.keys(this.headers)
  }

  getHeaders () {
    return { ...this.headers }
  }

  /**
   * Send the head and the whole body, if any, and end the stream, with a
   * Content-Length where Node's HTTP/1.1 response would add one. HEAD, 204
   * and 304 answers carry no body.
   * @param {string|Buffer|Uint8Array} [body]
   * @returns {this}
   */
  end (body) {
    if (this.writableEnded) return this
    this.writableEnded = true
    const length = bodyLength(body)
    const stream = this.stream
    if (this.headers['content-length'] === undefined && sendsLength(this.method, this.statusCode)) {
      this.headers['content-length'] = length
    }
    if (!this.startHead()) return this
    countSentBytes(this, length)
    if (length === 0 || !sendsLength(this.method, this.statusCode)) {
      stream.respond(this.headers, { endStream: true })
    } else {
      stream.respond(this.headers)
      stream.end(body)
    }
    return this
  }

  /**
   * Send a file (or a part of it) from disk, read in chunks into the stream.
   * Not by respondWithFile: on Node.js 22 and 24 a client resetting the
   * stream while Node's native pipe from the file is between two reads
   * crashes the process (SIGSEGV in StreamPipe::ProcessData, reproduced with
   * nothing but node:http2, a 8 MiB file and a client cancelling at the
   * head), so a cancelled download would take the worker down.
   * @param {string} file
   * @param {number} offset first byte
   * @param {number} length bytes to send
   * @param {(err: Error) => void} onError the file could not be opened; no head went out
   */
  sendFile (file, offset, length, onError) {
    if (this.writableEnded) return
    this.writableEnded = true
    if (!this.startHead()) return
    countSentBytes(this, length)
    fs.open(file, 'r', (err, fd) => {
      if (err !== null) this.fileFailed(err, length, onError)
      else this.streamFile(fd, offset, length)
    })
  }

  streamFile (fd, offset, length) {
    const stream = this.stream
    if (stream.destroyed || stream.closed) {
      fs.close(fd, ignoreError)
      return
    }
    if (length === 0) {
      fs.close(fd, ignoreError)
      stream.respond(this.headers, { endStream: true })
      return
    }
    stream.respond(this.headers)
    const body = fs.createReadStream(null, { fd, start: offset, end: offset + length - 1, highWaterMark: FILE_CHUNK_BYTES })
    // A reset stream destroys the read stream (closing the file); a read
    // error resets the stream: its head is out, only the reset can tell.
    pipeline(body, stream, ignoreError)
  }

  // Until the file is open, a failure to open it leaves the
  // response as it was, to be answered with an error page.
  fileFailed (err, length, onError) {
    this.writableEnded = false
    this.headersSent = false
    delete this.headers[':status']
    countSentBytes(this, -length)
    onError(err)
  }

  // false when the client is gone and nothing can be sent any more.
  startHead () {
    const stream = this.stream
    if (stream.destroyed || stream.closed) return false
    this.headersSent = true
    this.headers[':status'] = this.statusCode
    return true
  }

  /**
   * Reset the stream, as Http2ServerResponse#destroy does.
   * @param {Error} [err]
   */
  destroy (err) {
    this.stream.destroy(err)
  }
}

function ignoreError () {}

// `this` is the stream: one listener for every response, no closure each.
// The stream lets go of its response: Node's session keeps its streams in
// a Map, and V8 keeps every entry a Map's old hash tables held alive for
// as long as one of those tables is in the old generation, which the
// session's, a long-lived object, soon is. So a closed stream can outlive
// many young-generation collections, and anything it still points to (the
// response, its request's context, the request) is copied by each and then
// promoted with it.
function onStreamClose () {
  const res = this[kResponse]
  this[kResponse] = null
  if (res.openStreams !== null) res.openStreams.closed()
  if (res.promoted) return
  res.writableFinished = res.writableEnded && this.rstCode === NO_ERROR
  if (res.writableFinished) res.emit('finish')
  if (res[kOnClose] !== null) res[kOnClose]()
  res.emit('close')
}

module.exports = { StreamResponse }
