'use strict'

const { reasonPhrase } = require('../pipeline/request/respond')
const { compileHeaderSet } = require('../pipeline/request/custom-headers')

const { MAX_REQUEST_LINE } = require('../pipeline/stages/request-target')

// A refused line is logged up to this length, so a scanner cannot fill the log.
const MAX_LOGGED_LINE = 2048
// token SP request-target SP HTTP-version (RFC 9112 §3)
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+ HTTP\/\d\.\d$/

// What rawPage sets itself; a custom header of the same name would repeat it.
const RAW_PAGE_HEADERS = new Set(['content-type', 'content-length', 'connection', 'allow'])

const STATUS_BY_CODE = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_INVALID_METHOD: 405,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADERS_TIMEOUT: 408
}

/**
 * The header lines every answer written on a raw socket carries: `Server`
 * and the `customHeaders` (HSTS or a CSP must not go missing on a 400).
 * The host is unknown there, so `customHeadersVHost` cannot apply, and
 * headers whose value names `{path}` are left out. Worked out once per
 * configuration.
 * @param {object} config
 * @param {string} serverString
 * @returns {string} "Name: value\r\n" lines
 */
function rawHeaderLines (config, serverString) {
  let lines = ''
  for (const [name, value] of compileHeaderSet(config.customHeaders, null, serverString).fixed) {
    if (!RAW_PAGE_HEADERS.has(name.toLowerCase())) lines += name + ': ' + value + '\r\n'
  }
  return lines
}

/**
 * A request Node's parser rejected never reaches the pipeline; answer it on
 * the raw socket with a short page and close, as nginx does. Responses to
 * earlier requests pipelined on the same connection are sent first.
 * @param {Error & {code?: string, rawPacket?: Buffer}} err
 * @param {import('node:net').Socket} socket
 * @param {string} headerLines from rawHeaderLines
 * @param {import('./runtime').Runtime} runtime the worker's, whose counters and access log take the refused request
 */
function answerClientError (err, socket, headerLines, runtime) {
  if (!socket.writable || err.code === 'ECONNRESET' || abandonsBody(err, socket)) {
    socket.destroy()
    return
  }
  runtime.stats.countMalformed()
  let status = STATUS_BY_CODE[err.code] || 400
  if (status === 431 && requestLineTooLong(err.rawPacket)) status = 414
  // llhttp calls anything before the first space a method: a line that is
  // not "METHOD target HTTP/x.y" at all is a bad request, not a bad method.
  const line = lineAt(err.rawPacket, err.bytesParsed)
  if (status === 405 && !looksLikeRequestLine(line)) status = 400
  afterPendingResponses(socket, status, headerLines, line, runtime.accessLog)
}

/**
 * Whether the client ended its side of the connection in the middle of a
 * request body that nothing has answered yet. The rest of the body can
 * never come, and Node neither ends nor aborts such a request: whoever
 * reads it (a script, a mod, the proxy, which would then blame its
 * upstream for the stalled body) would wait for ever. Destroying the
 * socket aborts the request, as a client that reset the connection does.
 * An answer already under way is left to finish.
 * @param {Error & {code?: string}} err
 * @param {import('node:net').Socket} socket
 * @returns {boolean}
 */
function abandonsBody (err, socket) {
  if (err.code !== 'HPE_INVALID_EOF_STATE') return false
  const pending = socket._httpMessage
  return pending != null && pending.req != null && !pending.req.complete && !pending.headersSent
}

/**
 * A TLS handshake that failed. A client that spoke plain HTTP to the TLS
 * port gets 497 in cleartext, as from SVR.JS and nginx, so that the person
 * behind it learns to type https://; anything else is just closed.
 * @param {Error & {code?: string}} err
 * @param {import('node:tls').TLSSocket} tlsSocket
 * @param {string} headerLines from rawHeaderLines
 * @param {import('./runtime').Runtime} runtime the worker's, whose counters take the refused request
 */
function answerTlsClientError (err, tlsSocket, headerLines, runtime) {
  // The TCP socket under the TLS one is reachable only through this
  // long-stable private field; without it the connection just closes.
  const raw = tlsSocket._parent
  if (err.code !== 'ERR_SSL_HTTP_REQUEST' || raw == null || !raw.writable) {
    tlsSocket.destroy()
    return
  }
  runtime.stats.countMalformed()
  raw.end(rawPage(497, headerLines).text, 'latin1')
}

/**
 * CONNECT on the server that only redirects to HTTPS: not a proxy.
 * @param {import('node:net').Socket} socket
 * @param {string} headerLines from rawHeaderLines
 */
function answerConnectRefused (socket, headerLines) {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  socket.end(rawPage(501, headerLines).text, 'latin1')
}

// Node attaches the response being written to the socket (a private but
// long-stable field) and attaches the next pipelined one when it finishes.
// Writing the error page and closing before they are done would cut off
// answers to requests that were perfectly valid.
function afterPendingResponses (socket, status, headerLines, line, accessLog) {
  const pending = socket._httpMessage
  if (pending) {
    pending.once('close', () => afterPendingResponses(socket, status, headerLines, line, accessLog))
    return
  }
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const page = rawPage(status, headerLines)
  accessLog.logRejected(socket, status, line === null ? null : line.slice(0, MAX_LOGGED_LINE), page.bodyBytes)
  // Header values may hold latin-1 characters, sent as single bytes as Node does.
  socket.end(page.text, 'latin1')
}

function rawPage (status, headerLines) {
  const title = status + ' ' + reasonPhrase(status)
  const body = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + title +
    '</title></head><body><h1>' + title + '</h1></body></html>\n'
  const bodyBytes = Buffer.byteLength(body)
  const text = 'HTTP/1.1 ' + title + '\r\n' +
    headerLines +
    'Content-Type: text/html; charset=utf-8\r\n' +
    'Content-Length: ' + bodyBytes + '\r\n' +
    (status === 405 ? 'Allow: GET, HEAD, OPTIONS\r\n' : '') +
    'Connection: close\r\n\r\n' + body
  return { text, bodyBytes }
}

// The packet may start with earlier pipelined requests; the parser stopped
// inside the refused line, so it starts after the last line break before
// that point.
function lineAt (packet, offset) {
  if (!Buffer.isBuffer(packet)) return null
  const at = Number.isInteger(offset) ? Math.min(Math.max(offset, 0), packet.length) : 0
  const start = at === 0 ? 0 : packet.lastIndexOf(10 /* \n */, at - 1) + 1
  let end = packet.indexOf('\r\n', start)
  if (end === -1) end = packet.length
  return packet.toString('latin1', start, end)
}

function looksLikeRequestLine (line) {
  if (line === null) return false
  if (line.length > MAX_REQUEST_LINE + 64) return true
  return REQUEST_LINE.test(line)
}

function requestLineTooLong (packet) {
  if (!Buffer.isBuffer(packet)) return false
  const end = packet.indexOf('\r\n')
  return end === -1 ? packet.length > MAX_REQUEST_LINE : end > MAX_REQUEST_LINE
}

module.exports = { rawHeaderLines, answerClientError, answerTlsClientError, answerConnectRefused }
