'use strict'

const http2 = require('node:http2')

// Connection-specific headers are forbidden in HTTP/2 (RFC 9113 §8.2.2) and
// Node throws when asked to send one. Scripts and mods written for
// HTTP/1.1 set them freely, so they are dropped instead.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

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
 * HTTP/2 response that ignores hop-by-hop headers instead of throwing.
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

  // HTTP/2 has no reason phrase; passing one on would only print a warning.
  writeHead (statusCode, reason, headers) {
    return super.writeHead(statusCode, withoutHopByHop(typeof reason === 'string' ? headers : reason))
  }
}

function isHopByHop (name) {
  return typeof name === 'string' && HOP_BY_HOP.has(name.toLowerCase())
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

module.exports = { SvrHttp2Request, SvrHttp2Response, withoutHopByHop }
