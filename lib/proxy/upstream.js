'use strict'

const { connectOption, requestServername } = require('./upstream-tls')

/**
 * One upstream server as this worker sees it: its connection pool, the
 * requests in flight to it, its passive health (failures counted here) and
 * the verdict of the primary's active checks. Shared by every route of the
 * worker that names the same upstream with the same connection settings
 * (connections, connect timeout, TLS, HTTP/2), and kept across reloads
 * (lib/proxy/upstreams.js).
 */
class Upstream {
  /**
   * @param {import('./upstream-url').UpstreamAddress} address
   * @param {{connections: number, connectTimeout: number, tls: import('./upstream-tls').UpstreamTls, http2?: boolean}} settings
   */
  constructor (address, settings) {
    this.address = address
    this.name = address.name
    this.settings = settings
    this.pool = null
    // Given to undici with each request (lib/proxy/upstream-tls.js).
    this.servername = requestServername(address, settings.tls)
    // Whether its connections may be HTTP/2 ones: always for h2c://, by
    // ALPN for an https:// one of a route with `http2`.
    this.http2 = address.h2c || (address.secure && settings.http2 === true)
    // Requests of this worker waiting for or reading a response from it.
    this.inFlight = 0
    // The wake() of each route queue waiting for room on it (lib/proxy/queue.js).
    this.waiters = new Set()
    // Passive health: times of recent failures, and until when it is out.
    this.failures = []
    this.downUntil = 0
    // When it last came back from being out, for slowStart (0: never out).
    this.upSince = 0
    // The primary's verdict; true until active checks say otherwise.
    this.checkedHealthy = true
    // For the status page: answered exchanges and failed ones.
    this.requests = 0
    this.errors = 0
  }

  /**
   * The keep-alive pool, made at the first request.
   * @returns {import('undici').Pool}
   */
  dispatcher () {
    if (this.pool === null) {
      // Loaded at the first proxied request: a worker without routes, and
      // every worker's boot, do without undici's load time.
      const { Pool } = require('undici')
      const { address, settings } = this
      this.pool = new Pool(address.origin, {
        connections: settings.connections,
        // HTTP/2 is the connector's doing (h2c://, or h2 in ALPN). undici's
        // pipelining of 1 holds for HTTP/2 connections too, one stream each:
        // undici 7 holds a request with a streamed body back until its
        // connection is idle, so a second stream on a connection would wait
        // for the first, a gRPC stream of hours maybe; the pool opens
        // another connection instead.
        connect: connectOption(address, settings.connectTimeout, settings.tls, settings.http2),
        // Upstreams' idle connections are closed by us before their own
        // keep-alive timeout (commonly 5 s) would race a new request.
        keepAliveTimeout: 4000,
        keepAliveMaxTimeout: 600000
      })
    }
    return this.pool
  }

  /**
   * A request of this worker is done with it: a route queue waiting for
   * room may go on.
   */
  release () {
    this.inFlight--
    if (this.waiters.size !== 0) for (const wake of this.waiters) wake()
  }

  /**
   * @param {number} now ms
   * @returns {boolean} whether health has it in rotation
   */
  isUp (now) {
    if (this.downUntil !== 0 && this.downUntil <= now) {
      // A passive exclusion that ran out: back, and ramping up from now.
      this.upSince = this.downUntil
      this.downUntil = 0
    }
    return this.checkedHealthy && this.downUntil === 0
  }

  /**
   * A failed exchange: count it, and take the upstream out for `cooldown`
   * once `limit` failures fell within `window`, unless it is the last one
   * of its route in rotation (a lone application that restarts must not
   * be shut out after it is back).
   * @param {number} now ms
   * @param {{maxFails: number, failWindow: number, failTimeout: number}} rule
   * @param {boolean} last whether no other upstream of the route is up
   * @returns {boolean} whether this failure took it out
   */
  fail (now, rule, last) {
    if (rule.maxFails === 0) return false
    const since = now - rule.failWindow
    const failures = this.failures.filter((time) => time > since)
    failures.push(now)
    this.failures = failures
    if (failures.length < rule.maxFails || this.downUntil > now || last) return false
    this.downUntil = now + rule.failTimeout
    this.failures = []
    return true
  }

  /**
   * A successful exchange: the failures before it no longer add up, and an
   * upstream that was out (tried because every one was) is back.
   */
  succeed () {
    if (this.failures.length !== 0) this.failures = []
    if (this.downUntil !== 0) {
      this.downUntil = 0
      this.upSince = Date.now()
    }
  }

  /**
   * The primary's active checks passed again: a passive exclusion ends too.
   * @param {number} now ms
   */
  rejoin (now) {
    this.failures = []
    this.downUntil = 0
    this.upSince = now
  }
}

module.exports = { Upstream }
