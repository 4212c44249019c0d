'use strict'

const net = require('node:net')

/**
 * Write bytes on a fresh TCP connection and collect everything the server
 * sends until it closes the connection. Rejects when the server neither
 * answers nor closes within the timeout (a hang is a failure). The client
 * side stays open (a half-close would make Node drop a pending response),
 * so a request that keeps the connection alive needs `Connection: close`.
 * @param {number} port
 * @param {string|Buffer} data the request, sent exactly as given
 * @param {{host?: string, timeout?: number}} [opts]
 * @returns {Promise<{raw: string, status: number, headers: Object<string, string>, body: string}>}
 *   header names lower-cased; status NaN when no status line came back
 */
function rawRequest (port, data, opts = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: opts.host || '127.0.0.1', port })
    const chunks = []
    const timeout = opts.timeout || 5000
    socket.setTimeout(timeout, () => {
      socket.destroy()
      reject(new Error('no complete answer within ' + timeout + ' ms to ' + JSON.stringify(String(data).slice(0, 80)) +
        '; got ' + JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 200))))
    })
    socket.on('data', (chunk) => chunks.push(chunk))
    // A reset after the server wrote its answer still leaves a full answer to check.
    socket.on('error', () => {})
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks).toString('latin1'))))
    socket.write(data)
  })
}

/**
 * Split one raw HTTP/1.x response.
 * @param {string} raw
 */
function parseResponse (raw) {
  const end = raw.indexOf('\r\n\r\n')
  const head = end === -1 ? raw : raw.slice(0, end)
  const lines = head.split('\r\n')
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0])
  const headers = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon !== -1) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { raw, status: match === null ? NaN : Number(match[1]), headers, body: end === -1 ? '' : raw.slice(end + 4) }
}

module.exports = { rawRequest, parseResponse }
