'use strict'

const { randomBytes } = require('node:crypto')
const { responseHeaders } = require('./headers')
const { ProxyExchange, startExchange } = require('./forward')

/**
 * Pass a request for another protocol to an upstream of its route: an
 * HTTP/1.1 Upgrade (a WebSocket handshake), or an HTTP/2 extended CONNECT
 * (RFC 8441), which goes upstream as an HTTP/1.1 WebSocket handshake. Once
 * the upstream switches protocols, the client's connection (or stream) and
 * the upstream's are joined until either side closes or one is quiet for
 * `idleTimeout`. A connect failure goes to the next upstream, as for a
 * GET. An upstream that answers without switching (401, 403, 426, a
 * redirect…) has its answer passed on as any proxied answer, after which
 * the client's connection carries nothing more (HTTP/1.1: it is closed;
 * HTTP/2: the stream ends with it), as nginx and Caddy do.
 * @param {import('node:http').IncomingMessage} req an 'upgrade' request or an extended CONNECT
 * @param {import('node:http').ServerResponse} res its response (lib/worker/upgrade-response.js for HTTP/1.1)
 * @param {object} ctx
 * @param {import('./routes').Route} route
 * @param {{respond: object, log: object, upstreams: import('./upstreams').ProxyUpstreams}} env
 */
function tunnel (req, res, ctx, route, env) {
  if (route.members.some(mayBeHttp2)) {
    // undici would send the handshake as an HTTP/2 extended CONNECT (or
    // refuse any protocol but WebSocket), and what comes back is not the
    // HTTP/1.1 handshake answer the client's connection is joined on.
    env.log.warn('request ' + ctx.requestId + ': protocol upgrades are not forwarded on proxy route ' + route.number +
      ', whose upstreams may speak HTTP/2')
    env.respond.sendError(ctx, 501)
    return
  }
  startExchange(new TunnelExchange(req, res, ctx, route, env))
}

function mayBeHttp2 (member) {
  return member.upstream.http2
}

/**
 * A ProxyExchange whose request asks the upstream to switch protocols.
 * Its ordinary answers (and failures, retries, timeouts) are a proxied
 * request's; a 101 goes to onRequestUpgrade instead.
 */
class TunnelExchange extends ProxyExchange {
  constructor (req, res, ctx, route, env) {
    // What follows a handshake belongs to the new protocol: no body is
    // sent, so a handshake that reached no upstream may go to the next.
    super(req, res, ctx, route, env, false, true)
    this.overHttp2 = req.httpVersionMajor === 2
    this.protocol = this.overHttp2 ? req.headers[':protocol'] : req.headers.upgrade
  }

  requestOptions (headers, upstream) {
    if (this.overHttp2) handshakeFields(headers, this.protocol)
    const options = super.requestOptions(headers, upstream)
    options.method = 'GET'
    options.upgrade = this.protocol
    return options
  }

  onResponseStart (controller, statusCode, headers) {
    // Over HTTP/2, 2xx is how svr tells the client its tunnel is open: an
    // upstream's 2xx without switching cannot be passed on as it is.
    if (this.overHttp2 && statusCode >= 200 && statusCode < 300 && !this.done) {
      this.refuseAnswer(controller, new Error('no protocol switch'), 'answered the ' + this.protocol + ' handshake with ' +
        statusCode + ' instead of 101')
      return
    }
    super.onResponseStart(controller, statusCode, headers)
  }

  // The upstream switched protocols (undici hands its socket over): answer
  // the client and join the two. The exchange counts as in flight until
  // the tunnel closes, then as one answered request.
  onRequestUpgrade (controller, statusCode, headers, socket) {
    if (this.done) {
      socket.destroy()
      return
    }
    this.done = true
    this.answered = true
    const near = this.overHttp2 ? this.res.stream : this.res.socket
    if (near === undefined || near === null || near.destroyed) {
      socket.destroy()
      this.settle(null)
      return
    }
    try {
      if (this.overHttp2) answerStream(this.res, headers, this.route)
      else answerSocket(this.res, headers, this.route)
    } catch (err) {
      // A field Node refuses to send: nothing has gone to the client yet.
      socket.destroy()
      this.refuseAnswer(null, err, 'sent an unusable header: ' + err.message)
      return
    }
    const { res } = this
    splice(near, socket, this.route, () => {
      this.settle(null)
      // The access log reports the exchange when the tunnel is over; an
      // HTTP/2 response closes with its stream by itself.
      if (!this.overHttp2) res.emit('close')
    })
  }
}

// An HTTP/2 WebSocket has no key (RFC 8441 5): the upstream's HTTP/1.1
// handshake gets one of ours; its answer is checked by nobody but us.
function handshakeFields (headers, protocol) {
  if (protocol.toLowerCase() !== 'websocket') return
  headers['sec-websocket-key'] = randomBytes(16).toString('base64')
  if (headers['sec-websocket-version'] === undefined) headers['sec-websocket-version'] = '13'
}

// HTTP/1.1: 101 on the client's socket, which the response then lets go of.
function answerSocket (res, upstreamHeaders, route) {
  const headers = responseHeaders(upstreamHeaders, route)
  headers.connection = 'Upgrade'
  headers.upgrade = upstreamHeaders.upgrade
  res.writeHead(101, headers)
  res.end()
  res.detachSocket(res.socket)
}

// HTTP/2: 200 on the stream, which then carries the tunnel.
function answerStream (res, upstreamHeaders, route) {
  const headers = responseHeaders(upstreamHeaders, route)
  delete headers['sec-websocket-accept']
  res.writeHead(200, headers)
}

// Bytes both ways until both ends are closed. An end that closes has the
// other ended (its last bytes still go out); an error or `idleTimeout`
// without a byte destroys both.
function splice (near, far, route, done) {
  let open = 2
  for (const [from, to] of [[near, far], [far, near]]) {
    from.setTimeout(route.idleTimeout, () => {
      from.destroy()
      to.destroy()
    })
    from.on('error', () => to.destroy())
    from.once('close', () => {
      if (!to.destroyed && !to.writableEnded) to.end()
      if (--open === 0) done()
    })
    from.pipe(to)
  }
}

module.exports = { tunnel }
