'use strict'

const { reasonPhrase } = require('./respond')
const { countMalformed } = require('./stats')

// nginx answers a request line longer than its header buffer (8 KiB) with 414.
const MAX_REQUEST_LINE = 8192

const STATUS_BY_CODE = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_INVALID_METHOD: 405,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADERS_TIMEOUT: 408
}

/**
 * A request Node's parser rejected never reaches the pipeline; answer it on
 * the raw socket with a short page and close, as nginx does.
 * @param {Error & {code?: string, rawPacket?: Buffer}} err
 * @param {import('node:net').Socket} socket
 * @param {string} serverString
 */
function answerClientError (err, socket, serverString) {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy()
    return
  }
  countMalformed()
  let status = STATUS_BY_CODE[err.code] || 400
  if (status === 431 && requestLineTooLong(err.rawPacket)) status = 414
  const title = status + ' ' + reasonPhrase(status)
  const body = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + title +
    '</title></head><body><h1>' + title + '</h1></body></html>\n'
  socket.end('HTTP/1.1 ' + title + '\r\n' +
    'Server: ' + serverString + '\r\n' +
    'Content-Type: text/html; charset=utf-8\r\n' +
    'Content-Length: ' + Buffer.byteLength(body) + '\r\n' +
    (status === 405 ? 'Allow: GET, HEAD, OPTIONS\r\n' : '') +
    'Connection: close\r\n\r\n' + body)
}

function requestLineTooLong (packet) {
  if (!Buffer.isBuffer(packet)) return false
  const end = packet.indexOf('\r\n')
  return end === -1 ? packet.length > MAX_REQUEST_LINE : end > MAX_REQUEST_LINE
}

/**
 * CONNECT reaches only mods with a proxy callback; without one, say so
 * instead of letting Node drop the connection silently.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:net').Socket} socket
 * @param {string} serverString
 */
function refuseConnect (req, socket, serverString) {
  socket.end('HTTP/1.1 501 Not Implemented\r\nServer: ' + serverString +
    '\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
}

module.exports = { answerClientError, refuseConnect, MAX_REQUEST_LINE }
