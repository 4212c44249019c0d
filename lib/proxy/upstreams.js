'use strict'

const { Upstream } = require('./upstream')
const { tlsKey } = require('./upstream-tls')

/**
 * The upstreams of one worker, by name and connection settings. It lives
 * in the worker's runtime, as long as the worker; the primary's
 * active-check verdicts arrive here (the worker's `proxy-health` service).
 */
class ProxyUpstreams {
  constructor () {
    this.byKey = new Map()
    // Verdicts of the primary's active checks, by upstream name: a new
    // Upstream starts with the one known.
    this.verdicts = new Map()
    // When the last of them arrived: the next comes one check interval later.
    this.verdictAt = Date.now()
    // The per-upstream metrics (lib/metrics/proxy.js), while `metricsPath` is set.
    this.metrics = null
    // The routes' queues (lib/proxy/queue.js), for the status page and metrics.
    this.queues = new Set()
  }

  /**
   * The end of one exchange with an upstream: counters, passive health
   * (an upstream taken out is logged once, by the worker that took it
   * out) and metrics.
   * @param {import('./member').Member} member the upstream as the route has it
   * @param {boolean} ok
   * @param {number} seconds from the first attempt to the end
   * @param {{health: object, members: import('./member').Member[]}} route the route's passive health rule and members
   * @param {{warn: Function}} log
   */
  report (member, ok, seconds, route, log) {
    const { upstream } = member
    upstream.requests++
    if (ok) {
      upstream.succeed()
    } else {
      upstream.errors++
      const now = Date.now()
      const rule = route.health
      if (upstream.fail(now, rule, isLastUp(route, member, now))) {
        log.warn('proxy upstream ' + upstream.name + ' is out for ' + rule.failTimeout + ' ms after ' + rule.maxFails +
          ' failures within ' + rule.failWindow + ' ms')
      }
    }
    if (this.metrics !== null) this.metrics.observe(upstream.name, ok, seconds)
  }

  /**
   * @param {import('./upstream-url').UpstreamAddress} address
   * @param {{connections: number, connectTimeout: number, tls: import('./upstream-tls').UpstreamTls, http2?: boolean}} settings
   * @returns {Upstream}
   */
  get (address, settings) {
    const key = address.name + ' ' + settings.connections + ' ' + settings.connectTimeout + ' ' + tlsKey(address, settings.tls) +
      (address.secure && settings.http2 === true ? ' h2' : '')
    let upstream = this.byKey.get(key)
    if (upstream === undefined) {
      upstream = new Upstream(address, settings)
      const verdict = this.verdicts.get(address.name)
      if (verdict !== undefined) upstream.checkedHealthy = verdict
      this.byKey.set(key, upstream)
    }
    return upstream
  }

  /**
   * Close every pool once its requests are done: the worker is finished,
   * and an in-process worker's process goes on (lib/primary/in-process-launcher.js).
   */
  close () {
    for (const upstream of this.byKey.values()) {
      if (upstream.pool !== null) upstream.pool.close().catch(() => {})
    }
    this.byKey.clear()
  }

  /**
   * The primary's verdicts (upstream name -> healthy).
   * @param {Object<string, boolean>} verdicts
   */
  setVerdicts (verdicts) {
    this.verdictAt = Date.now()
    for (const [name, healthy] of Object.entries(verdicts)) {
      if (typeof healthy !== 'boolean') continue
      this.verdicts.set(name, healthy)
      for (const upstream of this.byKey.values()) {
        if (upstream.name !== name) continue
        if (healthy && !upstream.checkedHealthy) upstream.rejoin(Date.now())
        upstream.checkedHealthy = healthy
      }
    }
  }

  /**
   * What the status page shows of this worker's upstreams.
   * @returns {Array<{name: string, requests: number, errors: number, inFlight: number, up: boolean}>}
   */
  snapshot () {
    const now = Date.now()
    const rows = new Map()
    for (const upstream of this.byKey.values()) {
      const row = rows.get(upstream.name) || { name: upstream.name, requests: 0, errors: 0, inFlight: 0, queued: 0, up: true }
      row.requests += upstream.requests
      row.errors += upstream.errors
      row.inFlight += upstream.inFlight
      row.up = row.up && upstream.isUp(now)
      rows.set(upstream.name, row)
    }
    // A request waiting in a route's queue waits for each of its upstreams.
    for (const queue of this.queues) {
      if (queue.waiting.length === 0) continue
      const names = new Set(queue.route.members.map((member) => member.upstream.name))
      for (const name of names) rows.get(name).queued += queue.waiting.length
    }
    return [...rows.values()]
  }

  /**
   * A request a route's queue turned away with 503.
   * @param {string} upstreamNames the route's upstreams, for the metric's label
   * @param {'full'|'timeout'} reason
   */
  countRejection (upstreamNames, reason) {
    if (this.metrics !== null) this.metrics.rejected(upstreamNames, reason)
  }
}

// Whether no other member of the route is in rotation: the last one
// stays in, whatever its failures.
function isLastUp (route, member, now) {
  for (const other of route.members) {
    if (other !== member && other.upstream.isUp(now)) return false
  }
  return true
}

module.exports = { ProxyUpstreams }
