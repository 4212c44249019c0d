'use strict'

const http2 = require('node:http2')
const { countBodyBytes } = require('../pipeline/request/response-bytes')
const { ignoreSecondWriteHead, headForWrappers } = require('../pipeline/request/tolerant-response')
// Connection-specific headers are forbidden in HTTP/2 and Node throws when
// asked to send one. Scripts and mods written for HTTP/1.1 set them freely,
// so they are dropped instead.
const { isConnectionSpecific: isHopByHop } = require('../util/header-names')

/**
 * HTTP/2 request with a Host header, so that code reading req.headers.host
 * (virtual hosts, error pages, scripts) works as over HTTP/1.1.
 */
class SvrHttp2Request extends http2.Http2ServerRequest {
  constructor (stream, headers, options, rawHeaders) {
    super(stream, headers, options, rawHeaders)
    const authority = headers[':authority']
    if (headers.host === undefined && authority !== undefined) headers.host = authority
  }
}

/**
 * HTTP/2 response that ignores hop-by-hop headers instead of throwing, and
 * a second writeHead as SVR.JS did (lib/pipeline/request/tolerant-response.js).
 */
class SvrHttp2Response extends http2.Http2ServerResponse {
  setHeader (name, value) {
    if (isHopByHop(name)) return this
    return super.setHeader(name, value)
  }

  appendHeader (name, value) {
    if (isHopByHop(name)) return this
    return super.appendHeader(name, value)
  }

  write (chunk, encoding, callback) {
    headForWrappers(this)
    return super.write(chunk, encoding, callback)
  }

  // Content-Length as Node's HTTP/1.1 response sets it for a body given whole to end().
  end (chunk, encoding, callback) {
    if (!this.headersSent && !this.hasHeader('content-length') && sendsLength(this.req.method, this.statusCode)) {
      this.setHeader('content-length', typeof chunk === 'function' ? 0 : bodyLength(chunk, encoding))
    }
    // As SvrServerResponse#_implicitHeader: mods that wrap writeHead get the fields.
    headForWrappers(this)
    return super.end(chunk, encoding, callback)
  }

  // HTTP/2 has no reason phrase; passing one on would only print a warning.
  writeHead (statusCode, reason, headers) {
    if (ignoreSecondWriteHead(this, statusCode)) return this
    return super.writeHead(statusCode, withoutHopByHop(typeof reason === 'string' ? headers : reason))
  }
}

// The response class HTTP/2 servers are created with: it counts its body
// bytes for the access log and the metrics.
const Http2Response = countBodyBytes(SvrHttp2Response)

/**
 * Whether Node's HTTP/1.1 response would add Content-Length to an answer
 * ended at once: not to a HEAD, nor to a status that has no body.
 * @param {string} method
 * @param {number} status
 * @returns {boolean}
 */
function sendsLength (method, status) {
  return method !== 'HEAD' && status >= 200 && status !== 204 && status !== 304
}

/**
 * @param {string|Uint8Array|null|undefined} body
 * @param {string} [encoding]
 * @returns {number} its length in bytes
 */
function bodyLength (body, encoding) {
  if (body === undefined || body === null) return 0
  return typeof body === 'string' ? Buffer.byteLength(body, typeof encoding === 'string' ? encoding : 'utf8') : body.byteLength
}


// Copies only when there is something to drop: the common case costs a scan.
function withoutHopByHop (headers) {
  if (headers === null || typeof headers !== 'object') return headers
  if (Array.isArray(headers)) return filterArray(headers)
  let clean = headers
  for (const name of Object.keys(headers)) {
    if (!isHopByHop(name)) continue
    if (clean === headers) clean = { ...headers }
    delete clean[name]
  }
  return clean
}

// writeHead also takes [[name, value], …] or a flat [name, value, …] list.
function filterArray (headers) {
  if (headers.length !== 0 && Array.isArray(headers[0])) return headers.filter((pair) => !isHopByHop(pair[0]))
  const clean = []
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (!isHopByHop(headers[i])) clean.push(headers[i], headers[i + 1])
  }
  return clean
}

module.exports = { SvrHttp2Request, SvrHttp2Response, Http2Response, withoutHopByHop, sendsLength, bodyLength }
