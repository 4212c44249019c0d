'use strict'

/**
 * A response for a request Node handed over as an 'upgrade' (a WebSocket
 * handshake, `Upgrade: h2c`, …): such a request leaves the server's
 * parser, so it gets a ServerResponse on its socket here and goes through
 * the pipeline like any other. A proxy route may take the socket over
 * (lib/proxy/tunnel.js); any other answer is an ordinary response, after
 * which the connection is closed, since no parser reads from it again.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:net').Socket} socket
 * @param {Buffer} head bytes that arrived after the request's headers
 * @param {typeof import('node:http').ServerResponse} ServerResponse the server's response class
 * @returns {import('node:http').ServerResponse}
 */
function upgradeResponse (req, socket, head, ServerResponse) {
  if (head.length !== 0) socket.unshift(head)
  const res = new ServerResponse(req)
  res.shouldKeepAlive = false
  res.assignSocket(socket)
  res.once('finish', function closeUnlessTunnelled () {
    if (res.socket === socket) socket.destroySoon()
  })
  socket.on('error', function onUpgradeSocketError () {
    // A reset client: 'close' follows, the response's close with it.
  })
  return res
}

module.exports = { upgradeResponse }
