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
    // The per-upstream metrics (lib/metrics/proxy.js), while `metricsPath` is set.
    this.metrics = null
  }

  /**
   * The end of one exchange with an upstream: counters, passive health
   * (an upstream taken out is logged once, by the worker that took it
   * out) and metrics.
   * @param {import('./upstream').Upstream} upstream
   * @param {boolean} ok
   * @param {number} seconds from the first attempt to the end
   * @param {{maxFails: number, failWindow: number, failTimeout: number}} rule the route's passive health
   * @param {{warn: Function}} log
   */
  report (upstream, ok, seconds, rule, log) {
    upstream.requests++
    if (ok) {
      upstream.succeed()
    } else {
      upstream.errors++
      if (upstream.fail(Date.now(), rule)) {
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
    for (const [name, healthy] of Object.entries(verdicts)) {
      if (typeof healthy !== 'boolean') continue
      this.verdicts.set(name, healthy)
      for (const upstream of this.byKey.values()) {
        if (upstream.name !== name) continue
        if (healthy && !upstream.checkedHealthy) upstream.rejoin()
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
      const row = rows.get(upstream.name) || { name: upstream.name, requests: 0, errors: 0, inFlight: 0, up: true }
      row.requests += upstream.requests
      row.errors += upstream.errors
      row.inFlight += upstream.inFlight
      row.up = row.up && upstream.isUp(now)
      rows.set(upstream.name, row)
    }
    return [...rows.values()]
  }
}

module.exports = { ProxyUpstreams }
