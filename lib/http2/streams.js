'use strict'

const { StreamRequest } = require('./stream-request')
const { StreamResponse } = require('./stream-response')

/**
 * Serve an HTTP/2 server's streams with the stream objects instead of
 * Node's compatibility layer. Node installs that layer as the server's
 * 'stream' listener when the first 'request' listener is added (HTTP/1.1
 * requests of `allowHTTP1` arrive as 'request' events too); it is taken off
 * and kept for what only it handles: CONNECT (the 'connect' event) and
 * `Expect` ('checkExpectation', 100-continue). Every other stream goes to
 * `onRequest` as a StreamRequest and a StreamResponse.
 * @param {import('node:http2').Http2SecureServer} server with its 'request' listener added
 * @param {(req: StreamRequest, res: StreamResponse) => void} onRequest
 */
function serveStreams (server, onRequest) {
  const compat = server.listeners('stream')
  if (compat.length !== 1) throw new Error('expected the HTTP/2 compatibility layer as the only stream listener, found ' + compat.length)
  const compatStream = compat[0]
  server.removeListener('stream', compatStream)
  server.on('stream', function onStream (stream, headers, flags, rawHeaders) {
    if (headers[':method'] === 'CONNECT' || headers.expect !== undefined) {
      compatStream.call(this, stream, headers, flags, rawHeaders)
      return
    }
    onRequest(new StreamRequest(stream, headers, rawHeaders), new StreamResponse(stream, headers[':method']))
  })
}

module.exports = { serveStreams }
