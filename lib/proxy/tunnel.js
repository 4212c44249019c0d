'use strict'

const { randomBytes } = require('node:crypto')
const { performance } = require('node:perf_hooks')
const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget, candidatesOf } = require('./routes')
const { failureOf } = require('./failures')

/**
 * Pass a request for another protocol to an upstream of its route: an
 * HTTP/1.1 Upgrade (a WebSocket handshake), or an HTTP/2 extended CONNECT
 * (RFC 8441), which goes upstream as an HTTP/1.1 WebSocket handshake. Once
 * the upstream switches protocols, the client's connection (or stream) and
 * the upstream's are joined until either side closes or one is quiet for
 * `idleTimeout`. A connect failure goes to the next upstream, as for a
 * GET; an upstream that refuses to switch is a 502.
 * @param {import('node:http').IncomingMessage} req an 'upgrade' request or an extended CONNECT
 * @param {import('node:http').ServerResponse} res its response (lib/upgrade-response.js for HTTP/1.1)
 * @param {object} ctx
 * @param {import('./routes').Route} route
 * @param {{respond: object, log: object, upstreams: import('./upstreams').ProxyUpstreams}} env
 * @returns {Promise<void>}
 */
async function tunnel (req, res, ctx, route, env) {
  const started = performance.now()
  const path = upstreamTarget(route, ctx)
  const overHttp2 = req.httpVersionMajor === 2
  const protocol = overHttp2 ? req.headers[':protocol'] : req.headers.upgrade
  const tried = new Set()
  let failure = null
  for (let attempt = 0; ; attempt++) {
    const candidates = candidatesOf(route, tried, Date.now())
    if (candidates.length === 0) break
    const upstream = candidates.length === 1 ? candidates[0] : route.pick(candidates, ctx.clientAddress)
    tried.add(upstream)
    ctx.upstream = upstream.name
    const headers = requestHeaders(req, ctx, route, upstream.address)
    if (overHttp2) handshakeFields(headers, protocol)
    try {
      const upgraded = await upstream.dispatcher().upgrade({ path, method: 'GET', headers, protocol, headersTimeout: route.firstByteTimeout })
      if (overHttp2) joinStream(res, ctx, route, upstream, upgraded, started, env)
      else joinSocket(res, ctx, route, upstream, upgraded, started, env)
      return
    } catch (err) {
      failure = failureOf(err)
      env.upstreams.report(upstream, false, (performance.now() - started) / 1000, route.health, env.log)
      env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' did not take the upgrade: ' + failure.reason)
      if (!failure.unreached || attempt >= route.retries || res.destroyed) break
    }
  }
  ctx.upstreamTime = performance.now() - started
  env.respond.sendError(req, res, failure === null ? 503 : failure.status)
}

// An HTTP/2 WebSocket has no key (RFC 8441 5): the upstream's HTTP/1.1
// handshake gets one of ours; its answer is checked by nobody but us.
function handshakeFields (headers, protocol) {
  if (protocol.toLowerCase() !== 'websocket') return
  headers['sec-websocket-key'] = randomBytes(16).toString('base64')
  if (headers['sec-websocket-version'] === undefined) headers['sec-websocket-version'] = '13'
}

// HTTP/1.1: answer 101 on the client's socket, then join the two sockets.
function joinSocket (res, ctx, route, upstream, upgraded, started, env) {
  const client = res.socket
  if (client === null || client.destroyed) {
    upgraded.socket.destroy()
    return
  }
  const headers = responseHeaders(upgraded.headers, route)
  headers.connection = 'Upgrade'
  headers.upgrade = upgraded.headers.upgrade
  res.writeHead(101, headers)
  res.end()
  res.detachSocket(client)
  // The access log reports the exchange when the tunnel is over.
  splice(client, upgraded.socket, upstream, route, () => {
    finish(ctx, route, upstream, started, env)
    res.emit('close')
  })
}

// HTTP/2: answer 200 on the stream, then join it to the upstream's socket.
// The stream's own 'close' ends the response for the access log.
function joinStream (res, ctx, route, upstream, upgraded, started, env) {
  const stream = res.stream
  if (stream === undefined || stream.destroyed) {
    upgraded.socket.destroy()
    return
  }
  const headers = responseHeaders(upgraded.headers, route)
  delete headers['sec-websocket-accept']
  res.writeHead(200, headers)
  splice(stream, upgraded.socket, upstream, route, () => finish(ctx, route, upstream, started, env))
}

function finish (ctx, route, upstream, started, env) {
  ctx.upstreamTime = performance.now() - started
  env.upstreams.report(upstream, true, ctx.upstreamTime / 1000, route.health, env.log)
}

// Bytes both ways until both ends are closed. An end that closes has the
// other ended (its last bytes still go out); an error or `idleTimeout`
// without a byte destroys both.
function splice (near, far, upstream, route, done) {
  upstream.inFlight++
  let open = 2
  for (const [from, to] of [[near, far], [far, near]]) {
    from.setTimeout(route.idleTimeout, () => {
      from.destroy()
      to.destroy()
    })
    from.on('error', () => to.destroy())
    from.once('close', () => {
      if (!to.destroyed && !to.writableEnded) to.end()
      if (--open !== 0) return
      upstream.inFlight--
      done()
    })
    from.pipe(to)
  }
}

module.exports = { tunnel }
