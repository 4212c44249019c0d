'use strict'

const { StreamRequest } = require('./stream-request')
const { StreamResponse } = require('./stream-response')

const kOpenStreams = Symbol('svr.http2.openStreams')

// The streams of one session still open, for its idle timer.
class OpenStreams {
  constructor () {
    this.open = 0
  }
}

/**
 * Count the open streams of a session from now on: its idle timer
 * (lib/worker/servers.js) closes it only when none is open, since a
 * response still being prepared sends no frame that would restart the
 * timer. The count rides on the one 'close' listener every stream has
 * (its StreamResponse's), instead of a listener of its own per stream.
 * @param {import('node:http2').ServerHttp2Session} session
 * @returns {OpenStreams}
 */
function countOpenStreams (session) {
  const streams = new OpenStreams()
  session[kOpenStreams] = streams
  return streams
}

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
    const session = stream.session
    const streams = session[kOpenStreams] === undefined ? null : session[kOpenStreams]
    if (headers[':method'] === 'CONNECT' || headers.expect !== undefined) {
      if (streams !== null) countCompatStream(stream, streams)
      compatStream.call(this, stream, headers, flags, rawHeaders)
      return
    }
    onRequest(new StreamRequest(stream, session, headers, rawHeaders), new StreamResponse(stream, headers[':method'], streams))
  })
}

// A stream Node's compatibility layer answers has no StreamResponse.
function countCompatStream (stream, streams) {
  streams.open++
  stream.once('close', () => { streams.open-- })
}

module.exports = { serveStreams, countOpenStreams }
