'use strict'

const { Readable } = require('node:stream')
const { svrError } = require('../errors')

const BODY_LIMIT = 'SVR_ERR_PROXY_BODY_LIMIT'

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {boolean} whether the request has a body to forward
 */
function hasBody (req) {
  if (req.httpVersionMajor === 2) return req.stream !== undefined && !req.stream.endAfterHeaders && !req.readableEnded
  const length = req.headers['content-length']
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined
}

function declaredLength (req) {
  const length = req.headers['content-length']
  return length === undefined ? -1 : Number(length)
}

/**
 * The body of one attempt when svr counts its bytes: a body without
 * Content-Length on a route with `maxBodySize`, cut off past the limit
 * with BODY_LIMIT. Like the request itself, it reads nothing until undici
 * first asks for data, so an attempt that never connected leaves the
 * client's body untouched for the next upstream (`touched` says whether it
 * did); destroying it (undici does on an error) lets go of the request
 * without destroying it.
 */
class AttemptBody extends Readable {
  /**
   * @param {import('node:stream').Readable} source the client's request
   * @param {number} limit bytes
   */
  constructor (source, limit) {
    super()
    this.source = source
    this.limit = limit
    this.seen = 0
    this.touched = false
    this.onData = this.onData.bind(this)
    this.onEnd = () => this.push(null)
    this.onError = (err) => this.destroy(err)
  }

  _read () {
    if (!this.touched) {
      this.touched = true
      this.source.on('data', this.onData)
      this.source.once('end', this.onEnd)
      this.source.once('error', this.onError)
    }
    this.source.resume()
  }

  onData (chunk) {
    this.seen += chunk.length
    if (this.seen > this.limit) {
      this.destroy(svrError(BODY_LIMIT, [this.limit]))
      return
    }
    if (!this.push(chunk)) this.source.pause()
  }

  _destroy (err, callback) {
    const { source } = this
    source.removeListener('data', this.onData)
    source.removeListener('end', this.onEnd)
    source.removeListener('error', this.onError)
    if (this.touched && !source.readableEnded) source.pause()
    callback(err)
  }
}

/**
 * What undici sends as the body of one attempt. undici reads a stream body
 * only once the connection is open and the request head written (its
 * onRequestStart), and lets go of it untouched when the attempt fails
 * before that, so the client's request itself is the body when there is no
 * limit to enforce on the way.
 * @param {import('node:http').IncomingMessage} req
 * @param {number|null} maxBodySize the route's, which a declared
 *   Content-Length was held against before anything was sent
 * @returns {import('node:stream').Readable}
 */
function attemptBody (req, maxBodySize) {
  if (maxBodySize === null || req.headers['content-length'] !== undefined) return req
  return new AttemptBody(req, maxBodySize)
}

module.exports = { hasBody, declaredLength, attemptBody, AttemptBody, BODY_LIMIT }
