'use strict'

const { performance } = require('node:perf_hooks')
const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget, candidatesOf } = require('./routes')
const { failureOf } = require('./failures')
const { hasBody, declaredLength, limited, BODY_LIMIT } = require('./request-body')
const { mustPause, endWithTrailers, cutResponse } = require('./response-end')

// Methods a request may be sent twice with (RFC 9110 9.2.2), when it has no body.
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])
const kExchange = Symbol('svr.proxyExchange')
// Why an exchange was aborted when the client's connection closed first.
const CLIENT_LEFT = new Error('the client closed the connection')

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
 */
function forward (req, res, ctx, route, env) {
  const withBody = hasBody(req)
  if (route.maxBodySize !== null && declaredLength(req) > route.maxBodySize) {
    res.shouldKeepAlive = false
    env.respond.sendError(ctx, 413)
    return
  }
  const body = !withBody ? null : route.maxBodySize === null || req.headers['content-length'] !== undefined ? req : limited(req, route.maxBodySize)
  startExchange(new ProxyExchange(req, res, ctx, route, env, body, !withBody && IDEMPOTENT.has(req.method)))
}

/**
 * Send an exchange's request to its first upstream; the client's response
 * closing aborts what is still waiting for the upstream.
 * @param {ProxyExchange} exchange
 */
function startExchange (exchange) {
  exchange.res[kExchange] = exchange
  exchange.res.on('close', onResponseClose)
  exchange.attempt()
}

/**
 * One request on its way through a route: undici's handler for each
 * attempt (Dispatcher#dispatch), which writes the upstream's answer
 * straight to the client's response. No Readable, promise or pipe per
 * answer: the upstream's socket is paused while the client's is full, and
 * resumed at its 'drain'.
 */
class ProxyExchange {
  constructor (req, res, ctx, route, env, body, retryable) {
    this.req = req
    this.res = res
    this.ctx = ctx
    this.route = route
    this.env = env
    this.body = body
    this.retryable = retryable
    this.path = upstreamTarget(route, ctx)
    this.started = performance.now()
    this.upstream = null
    // The upstreams tried, made at the first retry.
    this.tried = null
    this.attempts = 0
    this.failure = null
    // undici's controller of the current attempt (pause, resume, abort).
    this.controller = null
    // Set once the upstream's headers are in: from then on its answer is
    // the client's, and a break on either side ends both.
    this.answered = false
    this.clientGone = false
    // Set once the upstream's part is over (answered, failed or cut).
    this.done = false
  }

  // Send the request to the next upstream the policy picks; none left
  // ends the request with the last failure (or 503 when none was up).
  attempt () {
    const { route, ctx } = this
    const upstream = this.pickUpstream()
    if (upstream === null) {
      this.fail()
      return
    }
    const headers = requestHeaders(this.req, ctx, route, upstream.address)
    this.upstream = upstream
    this.controller = null
    this.attempts++
    ctx.upstream = upstream.name
    upstream.inFlight++
    upstream.dispatcher().dispatch(this.requestOptions(headers, upstream), this)
  }

  /**
   * undici's options for one attempt.
   * @param {object} headers the forwarded request's
   * @param {import('./upstream').Upstream} upstream
   * @returns {object}
   */
  requestOptions (headers, upstream) {
    const { route } = this
    return {
      path: this.path,
      method: this.req.method,
      headers,
      body: this.body,
      headersTimeout: route.firstByteTimeout,
      bodyTimeout: route.idleTimeout,
      servername: upstream.servername
    }
  }

  // The common case, one upstream that is up and not yet tried, without
  // the candidate list.
  pickUpstream () {
    const { route } = this
    const now = Date.now()
    if (this.upstream === null && route.upstreams.length === 1) {
      const only = route.upstreams[0]
      return only.isUp(now) ? only : null
    }
    if (this.tried === null) this.tried = new Set()
    if (this.upstream !== null) this.tried.add(this.upstream)
    const candidates = candidatesOf(route, this.tried, now)
    if (candidates.length === 0) return null
    return candidates.length === 1 ? candidates[0] : route.pick(candidates, this.ctx.clientAddress)
  }

  onRequestStart (controller) {
    this.controller = controller
    // The client left while the request waited for a connection.
    if (this.clientGone) controller.abort(CLIENT_LEFT)
  }

  onResponseStart (controller, statusCode, headers) {
    // Interim answers (100 Continue, 103) are svr's to send, not relayed.
    if (statusCode < 200 || this.done) return
    this.answered = true
    const { res, route } = this
    const fields = responseHeaders(headers, route)
    try {
      for (const name of Object.keys(fields)) res.setHeader(name, fields[name])
      res.statusCode = statusCode
    } catch (err) {
      // A field Node refuses to send (an HTTP/2 connection-specific one the
      // upstream sent without naming it in Connection).
      this.refuseAnswer(controller, err, 'sent an unusable header: ' + err.message)
    }
  }

  /**
   * An answer the client cannot be given: the upstream's exchange is cut
   * and the client gets a 502.
   * @param {object|null} controller undici's, of this attempt; null once
   *   undici is done with it (an upgrade handed over)
   * @param {Error} err why, for undici
   * @param {string} reason for the error log, after the upstream's name
   */
  refuseAnswer (controller, err, reason) {
    this.done = true
    this.upstream.inFlight--
    if (controller !== null) controller.abort(err)
    this.env.log.warn('request ' + this.ctx.requestId + ': upstream ' + this.upstream.name + ' ' + reason)
    this.ctx.upstreamTime = performance.now() - this.started
    this.env.respond.sendError(this.ctx, 502)
  }

  onResponseData (controller, chunk) {
    if (this.done) return
    if (!this.res.write(chunk) && mustPause(this.res, this.upstream)) {
      controller.pause()
      this.res.once('drain', resumeUpstream)
    }
  }

  onResponseEnd (controller, trailers) {
    if (this.done) return
    // The upstream's time ends with its last byte, before the access log
    // hears that the response is over.
    this.ctx.upstreamTime = performance.now() - this.started
    this.settle(null)
    const problem = endWithTrailers(this.req, this.res, controller, trailers)
    if (problem !== null) this.env.log.warn('request ' + this.ctx.requestId + ': upstream ' + this.upstream.name + ' ' + problem)
  }

  onResponseError (controller, err) {
    if (this.done) return
    if (this.answered) {
      // The upstream broke off its answer: the client sees a cut response,
      // never another one's bytes.
      this.settle(err)
      cutResponse(this.req, this.res)
      return
    }
    this.upstream.inFlight--
    if (this.clientGone) {
      this.done = true
      return
    }
    if (err.code === BODY_LIMIT) {
      this.done = true
      this.answerFailure({ status: 413, unreached: false, requestRefused: false, reason: err.message })
      return
    }
    const { env, route, ctx, upstream } = this
    // undici starts an attempt (onRequestStart) just before it writes the
    // request: a failure before that, such as a TLS handshake with a
    // certificate that does not verify, never reached the upstream.
    const failure = failureOf(err, this.controller !== null)
    this.failure = failure
    if (!failure.requestRefused) env.upstreams.report(upstream, false, (performance.now() - this.started) / 1000, route.health, env.log)
    env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' failed: ' + failure.reason)
    if (!this.retryable || !failure.unreached || this.attempts > route.retries) {
      this.fail()
      return
    }
    // The next attempt starts once undici is done with this one's error,
    // not from inside its handling.
    queueMicrotask(() => {
      if (this.clientGone) this.done = true
      else this.attempt()
    })
  }

  // No upstream answered: the last failure's status, or 503 when none was up.
  fail () {
    this.done = true
    this.answerFailure(this.failure)
  }

  answerFailure (failure) {
    const { res, route, env, ctx } = this
    ctx.upstreamTime = performance.now() - this.started
    if (failure === null) {
      env.respond.sendError(ctx, 503, { headers: { 'Retry-After': String(retryAfter(route)) } })
      return
    }
    // A body cut off at the limit leaves the rest of it unread.
    if (failure.status === 413) res.shouldKeepAlive = false
    env.respond.sendError(ctx, failure.status)
  }

  /**
   * The end of an answered exchange: the upstream's counters, health and
   * metrics. A client that went away is no failure of the upstream's.
   * @param {Error|null} err null when the upstream's answer was whole (or
   *   the client left), else how the upstream broke it off
   */
  settle (err) {
    this.done = true
    const { upstream, route, env, ctx } = this
    upstream.inFlight--
    const seconds = (performance.now() - this.started) / 1000
    if (ctx.upstreamTime < 0) ctx.upstreamTime = seconds * 1000
    const failed = err !== null && err !== CLIENT_LEFT
    env.upstreams.report(upstream, !failed, seconds, route.health, env.log)
    if (failed) env.log.warn('request ' + ctx.requestId + ': upstream ' + upstream.name + ' broke off its response: ' + failureOf(err).reason)
  }
}

// The client's response closed: over, or the client went away. An
// exchange still waiting for or reading the upstream's answer is aborted.
function onResponseClose () {
  const exchange = this[kExchange]
  if (exchange.done) return
  exchange.clientGone = true
  if (exchange.answered) exchange.settle(CLIENT_LEFT)
  if (exchange.controller !== null) exchange.controller.abort(CLIENT_LEFT)
}

function resumeUpstream () {
  const exchange = this[kExchange]
  if (!exchange.done) exchange.controller.resume()
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

module.exports = { forward, startExchange, ProxyExchange, IDEMPOTENT }
