'use strict'

const kPeer = Symbol('svr.http2.peer')

/**
 * What the stages read of an HTTP/2 session's connection, read once per
 * session: the session's `socket` is a Proxy, whose every property read or
 * write calls a handler function (about 0.3 µs of a request's own time in
 * a profile of `h2load -c50 -m10`). The per-connection memos of
 * lib/hosts/vhost.js (the addresses, the Host header) are kept here
 * instead of on the socket.
 */
class SessionPeer {
  /** @param {import('node:tls').TLSSocket} socket the session's (Node's proxy of it) */
  constructor (socket) {
    this.socket = socket
    this.remoteAddress = socket.remoteAddress
    this.localAddress = socket.localAddress
    this.encrypted = socket.encrypted === true
  }
}

/**
 * @param {import('node:http2').ServerHttp2Session} session
 * @returns {SessionPeer} the session's, made with its first stream
 */
function peerOf (session) {
  let peer = session[kPeer]
  if (peer === undefined) {
    peer = new SessionPeer(session.socket)
    session[kPeer] = peer
  }
  return peer
}

/**
 * What the stages before the application code read of an HTTP/2 request,
 * taken from the stream's header block: the fields of Node's
 * Http2ServerRequest they use, without its stream machinery. Scripts and
 * mods get a full Http2ServerRequest instead (lib/http2/promote.js).
 */
class StreamRequest {
  /**
   * @param {import('node:http2').ServerHttp2Stream} stream
   * @param {import('node:http2').ServerHttp2Session} session the stream's
   * @param {import('node:http2').IncomingHttpHeaders} headers as the 'stream' event gives them
   * @param {string[]} rawHeaders
   */
  constructor (stream, session, headers, rawHeaders) {
    // Code written for HTTP/1.1 (virtual hosts, error pages) reads Host;
    // Http2ServerRequest is given the same object, with the same addition.
    const authority = headers[':authority']
    if (headers.host === undefined && authority !== undefined) headers.host = authority
    this.stream = stream
    // The session's TLS socket (a proxy Node makes once per session), taken
    // now: a stream that is gone no longer knows its session.
    const peer = peerOf(session)
    this.socket = peer.socket
    this.peer = peer
    this.headers = headers
    this.rawHeaders = rawHeaders
    this.method = headers[':method']
    this.url = headers[':path']
    this.httpVersion = '2.0'
    this.httpVersionMajor = 2
    this.httpVersionMinor = 0
    // The full request and response, once made (lib/http2/promote.js).
    this.promoted = null
  }
}

module.exports = { StreamRequest }
