'use strict'

const { StreamRequest } = require('./stream-request')
const { StreamResponse } = require('./stream-response')

const kOpenStreams = Symbol('svr.http2.openStreams')
// The longest delay a timer takes: setTimeout makes a longer one 1 ms,
// where Node's session.setTimeout kept it at this (keepAliveTimeout has no
// maximum).
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The streams of one session still open, and its idle timer: a session
 * with no open stream for `timeout` ms is closed, as a kept-alive HTTP/1.1
 * connection is. The timer restarts when the last open stream closes, as
 * Go's HTTP/2 server (Caddy's) restarts its idle timer, and not with every
 * frame as Node's session.setTimeout does: that one refreshed a timer three
 * or four times per request (about 3,000 instructions of a static answer's
 * own time, callgrind). So a session is closed `timeout` ms after its last
 * response at the earliest; frames without a stream (PING, SETTINGS) do
 * not keep an idle one.
 */
class OpenStreams {
  /**
   * @param {import('node:http2').ServerHttp2Session} session
   * @param {number} timeout ms
   */
  constructor (session, timeout) {
    this.open = 0
    this.session = session
    this.timer = setTimeout(closeIfIdle, Math.min(timeout, MAX_TIMER_MS), this)
    this.timer.unref()
  }

  opened () {
    this.open++
  }

  closed () {
    if (--this.open === 0 && this.timer !== null) this.timer.refresh()
  }

  // The session is gone: its timer goes with it.
  stop () {
    clearTimeout(this.timer)
    this.timer = null
  }
}

// A timer that fires while a stream is open does nothing: the stream's
// close restarts it.
function closeIfIdle (streams) {
  if (streams.open === 0) streams.session.close()
}

/**
 * Close a session once no stream has been open on it for `timeout` ms
 * (lib/worker/servers.js), counting its open streams from now on. The
 * count rides on the one 'close' listener every stream has (its
 * StreamResponse's), instead of a listener of its own per stream.
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {number} timeout ms, more than 0
 * @returns {OpenStreams}
 */
function closeWhenIdle (session, timeout) {
  const streams = new OpenStreams(session, timeout)
  session[kOpenStreams] = streams
  session.once('close', () => streams.stop())
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
  streams.opened()
  stream.once('close', () => streams.closed())
}

module.exports = { serveStreams, closeWhenIdle }
