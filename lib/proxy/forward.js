'use strict'

const { performance } = require('node:perf_hooks')
const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget } = require('./routes')
const { failureOf } = require('./failures')
const { select, FULL } = require('./select')
const { hasBody, declaredLength, attemptBody, BODY_LIMIT } = require('./request-body')
const { addStickyCookie } = require('./sticky-cookie')
const { answerFailure } = require('./failure-answer')
const { mustPause, endWithTrailers, cutResponse } = require('./response-end')
const { startExchange, resumeUpstream, CLIENT_LEFT } = require('./exchange-start')

// Methods a request may be sent twice with (RFC 9110 9.2.2), when it has no body.
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])

/**
 * Forward a request to an upstream of its route and stream the answer
 * back. Upstreams are tried in the order the route's policy picks them; a
 * request goes to the next one, up to `retries` times, when the previous
 * one never got a byte of it (whatever its method), or when it is
 * idempotent without a body and the previous one failed before answering.
 * What fails ends in the usual error pages: 502, 504, 503 with Retry-After
 * when every upstream is out or full, 413 over the route's body limit.
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
  startExchange(new ProxyExchange(req, res, ctx, route, env, withBody, !withBody && IDEMPOTENT.has(req.method)))
}

/**
 * One request on its way through a route: undici's handler for each
 * attempt (Dispatcher#dispatch), which writes the upstream's answer
 * straight to the client's response. No Readable, promise or pipe per
 * answer: the upstream's socket is paused while the client's is full, and
 * resumed at its 'drain'.
 */
class ProxyExchange {
  constructor (req, res, ctx, route, env, withBody, idempotent) {
    this.req = req
    this.res = res
    this.ctx = ctx
    this.route = route
    this.env = env
    this.withBody = withBody
    // Whether a request the upstream may have begun on can go to another.
    this.idempotent = idempotent
    this.path = upstreamTarget(route, ctx)
    this.key = route.keyOf(ctx)
    this.started = performance.now()
    this.member = null
    // The members tried, made at the first retry.
    this.tried = null
    this.attempts = 0
    this.failure = null
    this.queued = false
    // This attempt's body (lib/proxy/request-body.js), read from the
    // client's request only once undici writes it: an attempt that never
    // connected leaves it unread.
    this.body = null
    // undici's controller of the current attempt (pause, resume, abort):
    // set just before the request is written.
    this.controller = null
    // Set once the upstream's headers are in: from then on its answer is
    // the client's, and a break on either side ends both.
    this.answered = false
    this.clientGone = false
    // Set once the upstream's part is over (answered, failed or cut).
    this.done = false
  }

  // Send the request to the next upstream the policy picks; when every
  // one is at its connection limit, wait in the route's queue; none left
  // ends the request with the last failure.
  attempt () {
    const choice = this.choose()
    if (choice === FULL) this.wait()
    else this.proceed(choice)
  }

  choose () {
    if (this.tried === null && this.member !== null) this.tried = new Set()
    if (this.member !== null) this.tried.add(this.member)
    return select(this.route, this.tried, this.key, Date.now())
  }

  proceed (member) {
    this.queued = false
    if (member === null) {
      this.fail()
      return
    }
    const { upstream } = member
    const headers = requestHeaders(this.req, this.ctx, this.route, upstream.address)
    this.member = member
    this.controller = null
    this.attempts++
    this.ctx.upstream = upstream.name
    upstream.inFlight++
    upstream.dispatcher().dispatch(this.requestOptions(headers, upstream), this)
  }

  // Every upstream the request may go to is at its limit: it waits for
  // room, or is answered 503 when the queue is full or it waited too long.
  wait () {
    const { queue } = this.route
    if (queue !== null && queue.add(this)) this.queued = true
    else this.expire()
  }

  expire () {
    this.queued = false
    this.done = true
    answerFailure(this, { status: 503, full: true })
  }

  // undici's options for one attempt, with a fresh body.
  requestOptions (headers, upstream) {
    const { route } = this
    if (this.withBody) this.body = attemptBody(this.req, route.maxBodySize)
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
    // A client without the cookie policy's cookie, or with one naming an
    // upstream it could not keep, gets one naming the upstream that answered.
    if (route.cookie !== null && this.key !== this.member.id) addStickyCookie(fields, route.cookie, this.member.id, this.ctx.secure)
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
    this.member.upstream.release()
    if (controller !== null) controller.abort(err)
    this.env.log.warn('request ' + this.ctx.requestId + ': upstream ' + this.member.upstream.name + ' ' + reason)
    this.ctx.upstreamTime = performance.now() - this.started
    this.env.respond.sendError(this.ctx, 502)
  }

  onResponseData (controller, chunk) {
    if (this.done) return
    if (!this.res.write(chunk) && mustPause(this.res, this.member.upstream)) {
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
    if (problem !== null) this.env.log.warn('request ' + this.ctx.requestId + ': upstream ' + this.member.upstream.name + ' ' + problem)
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
    this.member.upstream.release()
    if (this.clientGone) {
      this.done = true
      return
    }
    if (err.code === BODY_LIMIT) {
      this.done = true
      answerFailure(this, { status: 413, unreached: false, requestRefused: false, reason: err.message })
      return
    }
    const { env, route, ctx, member } = this
    // undici starts an attempt (onRequestStart) just before it writes the
    // request: a failure before that, such as a refused connection or a
    // TLS handshake with a certificate that does not verify, never reached
    // the upstream, and the request's body was not read.
    const sentNothing = this.controller === null && this.body?.touched !== true
    const failure = failureOf(err, !sentNothing)
    this.failure = failure
    if (!failure.requestRefused) env.upstreams.report(member, false, (performance.now() - this.started) / 1000, route, env.log)
    env.log.warn('request ' + ctx.requestId + ': upstream ' + member.upstream.name + ' failed: ' + failure.reason)
    if (failure.requestRefused || this.attempts > route.retries || !(sentNothing || (this.idempotent && failure.unreached))) {
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

  // Never started: the client had gone already.
  abandon () {
    this.clientGone = true
    this.done = true
  }

  // No upstream answered (lib/proxy/failure-answer.js).
  fail () {
    this.done = true
    answerFailure(this, this.failure)
  }

  /**
   * The end of an answered exchange: the upstream's counters, health and
   * metrics. A client that went away is no failure of the upstream's.
   * @param {Error|null} err null when the upstream's answer was whole (or
   *   the client left), else how the upstream broke it off
   */
  settle (err) {
    this.done = true
    const { member, route, env, ctx } = this
    member.upstream.release()
    const seconds = (performance.now() - this.started) / 1000
    if (ctx.upstreamTime < 0) ctx.upstreamTime = seconds * 1000
    const failed = err !== null && err !== CLIENT_LEFT
    env.upstreams.report(member, !failed, seconds, route, env.log)
    if (failed) env.log.warn('request ' + ctx.requestId + ': upstream ' + member.upstream.name + ' broke off its response: ' + failureOf(err).reason)
  }
}

module.exports = { forward, startExchange, ProxyExchange, IDEMPOTENT }
