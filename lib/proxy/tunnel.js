'use strict'

const { performance } = require('node:perf_hooks')
const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget, candidatesOf } = require('./routes')
const { failureOf } = require('./failures')

/**
 * Pass an HTTP/1.1 Upgrade request (a WebSocket handshake) to an upstream
 * of its route; once the upstream switches protocols, the client's socket
 * and the upstream's are joined until either side closes or both are
 * quiet for `idleTimeout`. A connect failure goes to the next upstream,
 * as for a GET; an upstream that refuses to switch is a 502.
 * @param {import('node:http').IncomingMessage} req an 'upgrade' request
 * @param {import('node:http').ServerResponse} res its response (lib/upgrade-response.js)
 * @param {object} ctx
 * @param {import('./routes').Route} route
 * @param {{respond: object, log: object, upstreams: import('./upstreams').ProxyUpstreams}} env
 * @returns {Promise<void>}
 */
async function tunnel (req, res, ctx, route, env) {
  const started = performance.now()
  const path = upstreamTarget(route, ctx)
  const tried = new Set()
  let failure = null
  for (let attempt = 0; ; attempt++) {
    const candidates = candidatesOf(route, tried, Date.now())
    if (candidates.length === 0) break
    const upstream = candidates.length === 1 ? candidates[0] : route.pick(candidates, ctx.clientAddress)
    tried.add(upstream)
    ctx.upstream = upstream.name
    try {
      const upgraded = await upstream.dispatcher().upgrade({
        path,
        method: req.method,
        headers: requestHeaders(req, ctx, route, upstream.address),
        protocol: req.headers.upgrade,
        headersTimeout: route.firstByteTimeout
      })
      join(res, ctx, route, upstream, upgraded, started, env)
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

function join (res, ctx, route, upstream, upgraded, started, env) {
  const client = res.socket
  const far = upgraded.socket
  if (client === null || client.destroyed) {
    far.destroy()
    return
  }
  const headers = responseHeaders(upgraded.headers, route)
  headers.connection = 'Upgrade'
  headers.upgrade = upgraded.headers.upgrade
  res.writeHead(101, headers)
  res.end()
  res.detachSocket(client)
  upstream.inFlight++
  let open = 2
  function closed () {
    if (--open !== 0) return
    upstream.inFlight--
    ctx.upstreamTime = performance.now() - started
    env.upstreams.report(upstream, true, ctx.upstreamTime / 1000, route.health, env.log)
    // The access log reports the exchange when the tunnel is over.
    res.emit('close')
  }
  for (const [from, to] of [[client, far], [far, client]]) {
    from.setTimeout(route.idleTimeout, () => from.destroy())
    from.on('error', () => to.destroy())
    from.once('close', () => {
      to.destroy()
      closed()
    })
    from.pipe(to)
  }
}

module.exports = { tunnel }
