'use strict'

const { Transform } = require('node:stream')
const { performance } = require('node:perf_hooks')
const { svrError } = require('../errors')
const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget, candidatesOf } = require('./routes')
const { failureOf } = require('./failures')

// Methods a request may be sent twice with (RFC 9110 9.2.2), when it has no body.
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])
const BODY_LIMIT = 'SVR_ERR_PROXY_BODY_LIMIT'

/**
 * Forward a request to an upstream of its route and stream the answer
 * back. Upstreams are tried in the order the route's policy picks them;
 * an idempotent request without a body goes to the next one when the
 * previous could not be reached, up to `retries` times. What fails ends
 * in the usual error pages: 502, 504, 503 with Retry-After when no
 * upstream is up, 413 over the route's body limit.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {object} ctx the request context
 * @param {import('./routes').Route} route
 * @param {{respond: object, log: object, upstreams: import('./upstreams').ProxyUpstreams}} env
 * @returns {Promise<void>} settles once the response is under way or answered
 */
async function forward (req, res, ctx, route, env) {
  const withBody = hasBody(req)
  if (route.maxBodySize !== null && declaredLength(req) > route.maxBodySize) {
    res.shouldKeepAlive = false
    env.respond.sendError(req, res, 413)
    return
  }
  const exchange = {
    path: upstreamTarget(route, ctx),
    body: !withBody ? null : route.maxBodySize === null || req.headers['content-length'] !== undefined ? req : limited(req, route.maxBodySize),
    retryable: !withBody && IDEMPOTENT.has(req.method),
    started: performance.now(),
    // Set once the upstream's headers are in: from then on the stream
    // pipeline ends both sides, and a client that goes away ends the body.
    answered: false,
    clientGone: false
  }
  // A client that goes away before the upstream answered cancels the
  // request. undici takes an EventEmitter as its signal, so the response
  // itself serves, without an AbortController per request.
  res.once('close', () => {
    if (exchange.answered) return
    exchange.clientGone = true
    res.emit('abort')
  })
  const failure = await tryUpstreams(req, res, ctx, route, env, exchange)
  if (failure === undefined) return
  ctx.upstreamTime = performance.now() - exchange.started
  if (failure === null) {
    env.respond.sendError(req, res, 503, { headers: { 'Retry-After': String(retryAfter(route)) } })
  } else {
    // A body cut off at the limit leaves the rest of it unread.
    if (failure.status === 413) res.shouldKeepAlive = false
    env.respond.sendError(req, res, failure.status)
  }
}

/**
 * Send the request to upstreams in the order the policy picks them until
 * one answers (its answer is then relayed) or a retry is not allowed.
 * @returns {Promise<import('./failures').Failure|null|undefined>} undefined
 *   when answered (or the client left), null when no upstream was up, else
 *   the last failure
 */
async function tryUpstreams (req, res, ctx, route, env, exchange) {
  const tried = new Set()
  let failure = null
  for (let attempt = 0; ; attempt++) {
    const candidates = candidatesOf(route, tried, Date.now())
    if (candidates.length === 0) return failure
    const upstream = candidates.length === 1 ? candidates[0] : route.pick(candidates, ctx.clientAddress)
    tried.add(upstream)
    ctx.upstream = upstream.name
    upstream.inFlight++
    let response
    try {
      response = await upstream.dispatcher().request({
        path: exchange.path,
        method: req.method,
        headers: requestHeaders(req, ctx, route, upstream.address),
        body: exchange.body,
        signal: res,
        headersTimeout: route.firstByteTimeout,
        bodyTimeout: route.idleTimeout
      })
    } catch (err) {
      upstream.inFlight--
      if (exchange.clientGone) return undefined
      if (err.code === BODY_LIMIT) return { status: 413, unreached: false, reason: err.message }
      failure = failureOf(err)
      env.upstreams.report(upstream, false, (performance.now() - exchange.started) / 1000, route.health, env.log)
      env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' failed: ' + failure.reason)
      if (exchange.retryable && failure.unreached && attempt < route.retries) continue
      return failure
    }
    exchange.answered = true
    relay(res, ctx, route, upstream, response, exchange.started, env)
    return undefined
  }
}

// Stream the upstream's answer to the client; a break on either side ends
// both (the client sees a cut response, never another one's bytes).
function relay (res, ctx, route, upstream, response, started, env) {
  const headers = responseHeaders(response.headers, route)
  try {
    for (const name of Object.keys(headers)) res.setHeader(name, headers[name])
    res.statusCode = response.statusCode
  } catch (err) {
    // A field Node refuses to send (an HTTP/2 connection-specific one the
    // upstream sent without naming it in Connection).
    response.body.destroy()
    upstream.inFlight--
    env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' sent an unusable header: ' + err.message)
    env.respond.sendError(res.req, res, 502)
    return
  }
  // The upstream's time ends with its last byte, before the access log
  // hears that the response is over.
  response.body.once('end', () => { ctx.upstreamTime = performance.now() - started })
  relayBody(response.body, res, (err) => {
    upstream.inFlight--
    const seconds = (performance.now() - started) / 1000
    if (ctx.upstreamTime < 0) ctx.upstreamTime = seconds * 1000
    // A client that went away is no failure of the upstream's.
    const failed = err !== null && err !== CLIENT_LEFT
    env.upstreams.report(upstream, !failed, seconds, route.health, env.log)
    if (failed) env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' broke off its response: ' + failureOf(err).reason)
  })
}

// What relayBody reports when the client's connection closed first.
const CLIENT_LEFT = new Error('the client closed the connection')

/**
 * Pipe the upstream's body to the client with backpressure. Not
 * stream.pipeline: Node 20's makes an AbortController, and aborts it with
 * a DOMException, on every call (8 % of a proxied request's CPU).
 * @param {import('node:stream').Readable} body
 * @param {import('node:http').ServerResponse} res
 * @param {(err: Error|null) => void} done once: null when the response
 *   ended, CLIENT_LEFT, or the upstream's error (the client's response is
 *   then cut short)
 */
function relayBody (body, res, done) {
  let settled = false
  function settle (err) {
    if (settled) return
    settled = true
    done(err)
  }
  body.on('error', (err) => {
    res.destroy()
    settle(err)
  })
  res.once('finish', () => settle(null))
  res.once('close', () => {
    if (settled) return
    body.destroy()
    settle(CLIENT_LEFT)
  })
  body.pipe(res)
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {boolean} whether the request has a body to forward
 */
function hasBody (req) {
  if (req.httpVersionMajor === 2) return req.stream !== undefined && !req.stream.endAfterHeaders && !req.readableEnded
  const length = req.headers['content-length']
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined
}

function declaredLength (req) {
  const length = req.headers['content-length']
  return length === undefined ? -1 : Number(length)
}

// A body without Content-Length, cut off past the route's limit.
function limited (req, limit) {
  let seen = 0
  const counter = new Transform({
    transform (chunk, encoding, callback) {
      seen += chunk.length
      if (seen > limit) callback(svrError(BODY_LIMIT, [limit]))
      else callback(null, chunk)
    }
  })
  req.on('error', (err) => counter.destroy(err))
  return req.pipe(counter)
}

// Seconds until an upstream may be up again: the end of the earliest
// passive exclusion, or one active-check interval.
function retryAfter (route) {
  const now = Date.now()
  let soonest = Infinity
  for (const upstream of route.upstreams) {
    if (upstream.downUntil > now) soonest = Math.min(soonest, upstream.downUntil - now)
  }
  if (soonest === Infinity) soonest = route.healthCheck === null ? 1000 : route.healthCheck.interval
  return Math.max(1, Math.ceil(soonest / 1000))
}

module.exports = { forward, hasBody, IDEMPOTENT }
