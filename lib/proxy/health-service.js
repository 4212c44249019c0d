'use strict'

const { parseUpstream } = require('./upstream-url')
const { connectOption, tlsKey } = require('./upstream-tls')

/**
 * Coordinator services for the active health checks of proxy routes. Each
 * check (an upstream and its check settings) runs once, here in the
 * primary, however many workers route to it; its verdict goes to every
 * worker that asked for it, at each change and again at every interval (so
 * a worker that missed a notice catches up). A check stops when no live
 * worker wants it any more. Changes are logged here, once for the server.
 * @param {import('../coordinator').Coordinator} coordinator
 * @returns {Object<string, Function>}
 */
function proxyHealthServices (coordinator) {
  const checkers = new Map()

  function verdicts () {
    const out = {}
    for (const checker of checkers.values()) out[checker.name] = (out[checker.name] !== false) && checker.healthy
    return out
  }

  function tell (watchers) {
    const current = verdicts()
    for (const peer of watchers) {
      if (!peer.notify('proxy-health', { verdicts: current })) forget(peer)
    }
  }

  function forget (peer) {
    for (const [key, checker] of checkers) {
      checker.watchers.delete(peer)
      if (checker.watchers.size === 0) {
        checker.stop()
        checkers.delete(key)
      }
    }
  }

  const hooks = {
    changed: () => tell(allWatchers(checkers)),
    ticked: (checker) => tell(checker.watchers),
    log: coordinator.log
  }

  return {
    'proxy-health-watch': (msg, from) => {
      const wanted = new Set()
      for (const { upstream, check, tls, http2 } of Array.isArray(msg.checks) ? msg.checks : []) {
        const address = parseUpstream(upstream).address
        if (address === null) continue
        const settings = address.secure ? tlsOf(tls) : null
        const alpnH2 = address.secure && http2 === true
        const key = upstream + ' ' + JSON.stringify(check) + ' ' + tlsKey(address, settings) + (alpnH2 ? ' h2' : '')
        wanted.add(key)
        let checker = checkers.get(key)
        if (checker === undefined) {
          checker = new Checker(address, check, settings, hooks, alpnH2)
          checkers.set(key, checker)
          checker.start()
        }
        checker.watchers.add(from)
      }
      for (const [key, checker] of checkers) {
        if (wanted.has(key)) continue
        checker.watchers.delete(from)
        if (checker.watchers.size === 0) {
          checker.stop()
          checkers.delete(key)
        }
      }
      return verdicts()
    }
  }
}

// The TLS settings a worker sent: anything malformed checks the
// certificate against Node.js's CA store, never less.
function tlsOf (value) {
  if (value === null || typeof value !== 'object') return { ca: null, servername: null, rejectUnauthorized: true }
  return {
    ca: Array.isArray(value.ca) ? value.ca.filter((pem) => typeof pem === 'string') : null,
    servername: typeof value.servername === 'string' ? value.servername : null,
    rejectUnauthorized: value.rejectUnauthorized !== false
  }
}

function allWatchers (checkers) {
  const peers = new Set()
  for (const checker of checkers.values()) {
    for (const peer of checker.watchers) peers.add(peer)
  }
  return peers
}

/**
 * One upstream's active check: GET `path` every `interval`; `fall` failures
 * in a row take it out, `rise` passes in a row bring it back.
 */
class Checker {
  /**
   * @param {import('./upstream-url').UpstreamAddress} address
   * @param {object} check the route's `healthCheck`
   * @param {import('./upstream-tls').UpstreamTls|null} tls the route's, for an https:// upstream
   * @param {object} hooks
   * @param {boolean} [http2] the route's `http2`, for an https:// upstream
   */
  constructor (address, check, tls, hooks, http2 = false) {
    this.name = address.name
    this.address = address
    this.check = check
    this.tls = tls
    this.http2 = http2
    this.hooks = hooks
    this.watchers = new Set()
    this.healthy = true
    this.streak = 0
    this.timer = null
    this.client = null
    this.running = false
  }

  start () {
    // Loaded with the first check: a primary without checks does without it.
    const { Client } = require('undici')
    // Checked in the protocol requests use (the connector makes an h2c://
    // upstream's connections HTTP/2 ones, and offers h2 to an https:// one
    // with `http2`): a gRPC server, say, may speak nothing but HTTP/2.
    this.client = new Client(this.address.origin, {
      connect: connectOption(this.address, this.check.timeout, this.tls, this.http2),
      pipelining: 0
    })
    // The primary's exit does not wait for the next check.
    this.timer = setInterval(() => this.run(), this.check.interval).unref()
    this.run()
  }

  stop () {
    clearInterval(this.timer)
    this.client.destroy().catch(() => {})
  }

  async run () {
    if (this.running) return
    this.running = true
    const problem = await this.probe()
    this.running = false
    this.judge(problem)
    this.hooks.ticked(this)
  }

  // null when the upstream passed, else what was wrong.
  async probe () {
    const { check } = this
    try {
      const response = await this.client.request({
        path: check.path,
        method: 'GET',
        headers: { host: this.address.host, 'user-agent': 'svr-health-check' },
        headersTimeout: check.timeout,
        bodyTimeout: check.timeout,
        signal: AbortSignal.timeout(check.timeout)
      })
      await response.body.dump()
      return check.status.includes(response.statusCode) ? null : 'status ' + response.statusCode
    } catch (err) {
      return (typeof err.code === 'string' ? err.code + ': ' : '') + err.message
    }
  }

  judge (problem) {
    const passed = problem === null
    if (passed === this.healthy) {
      this.streak = 0
      return
    }
    this.streak++
    if (this.streak < (this.healthy ? this.check.fall : this.check.rise)) return
    this.healthy = passed
    this.streak = 0
    if (passed) this.hooks.log.info('proxy upstream ' + this.name + ' is healthy again (' + this.check.rise + ' checks of ' + this.check.path + ' passed)')
    else this.hooks.log.warn('proxy upstream ' + this.name + ' is unhealthy after ' + this.check.fall + ' failed checks of ' + this.check.path + ': ' + problem)
    this.hooks.changed()
  }
}

module.exports = { proxyHealthServices }
