'use strict'

const crypto = require('node:crypto')
const http = require('node:http')

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

/**
 * A WebSocket echo upstream on loopback, for proxy tests: it accepts every
 * handshake, echoes each (small, single-frame) text message back prefixed
 * with "echo: ", and answers a close frame with one. `handshakes` keeps
 * the headers of every handshake it got.
 * @param {object} t node:test context (closes it after the test)
 * @param {{answer?: (req: http.IncomingMessage) => string|null}} [opts] answer:
 *   the bytes to write instead of accepting a handshake, after which the
 *   upstream ends the connection; null accepts it
 * @returns {Promise<{origin: string, handshakes: object[]}>}
 */
async function startWebSocketUpstream (t, opts = {}) {
  const handshakes = []
  const sockets = new Set()
  const server = http.createServer((req, res) => res.writeHead(426).end())
  server.on('upgrade', (req, socket) => {
    handshakes.push(req.headers)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    const refusal = opts.answer === undefined ? null : opts.answer(req)
    if (refusal !== null) {
      socket.end(refusal)
      return
    }
    const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + GUID).digest('base64')
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n')
    socket.on('data', (data) => echoFrames(socket, data))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return { origin: 'http://127.0.0.1:' + server.address().port, handshakes }
}

// Masked client frames with payloads under 126 bytes, whole in `data`.
function echoFrames (socket, data) {
  let at = 0
  while (at + 6 <= data.length) {
    const opcode = data[at] & 0x0f
    const length = data[at + 1] & 0x7f
    const mask = data.subarray(at + 2, at + 6)
    const payload = Buffer.alloc(length)
    for (let i = 0; i < length; i++) payload[i] = data[at + 6 + i] ^ mask[i % 4]
    at += 6 + length
    if (opcode === 8) {
      socket.end(Buffer.concat([Buffer.from([0x88, payload.length]), payload]))
      return
    }
    const answer = Buffer.concat([Buffer.from('echo: '), payload])
    socket.write(Buffer.concat([Buffer.from([0x81, answer.length]), answer]))
  }
}

module.exports = { startWebSocketUpstream }
