'use strict'

const { wildcardPattern } = require('../hosts/server-names')
const { nameProblem } = require('./names')
const { singleFlight } = require('../util/single-flight')

// How long the `ask` endpoint may take to answer for a name.
const ASK_TIMEOUT_MS = 5000
// A name refused (by `allow`, `ask` or the rate) is not asked about again
// for this long: a client retrying its handshake in a loop costs nothing.
const REFUSED_FOR_MS = 60 * 1000
const MINUTE_MS = 60 * 1000
const OUTSIDE_ALLOW = 'it matches no pattern of acme.onDemand.allow'
// Refused names remembered at most: handshakes for random names must not
// grow the primary's memory without end.
const REFUSED_MAX = 10000

/**
 * Certificates on demand: a name that no configuration lists gets one at
 * its first TLS handshake, when `acme.onDemand` allows it (its `allow`
 * patterns, and its `ask` endpoint answering 2xx for it), within a rate of
 * new names per minute. Every worker's handshakes for a name wait on one
 * decision and one order (across a fleet, the order lock of the storage
 * keeps it to one); the handshake gets the certificate, or an alert when
 * the name is refused or the order is not done within `timeout`.
 */
class OnDemandCertificates {
  /**
   * @param {{ask: string|null, allow: string[]|null, maxNewNamesPerMinute: number, timeout: number}} settings acme.onDemand
   * @param {object} manager the certificate manager (lib/acme/manager.js)
   */
  constructor (settings, manager) {
    this.settings = settings
    this.manager = manager
    this.log = manager.log
    this.patterns = settings.allow === null ? null : settings.allow.map((pattern) => wildcardPattern(pattern.toLowerCase()))
    // name -> the decision and order in flight, which every handshake for it waits on.
    this.pending = new Map()
    // name -> until when it stays refused.
    this.refused = new Map()
    // When the orders for new names of the last minute started.
    this.started = []
    this.lastLogged = -Infinity
    this.unlogged = 0
  }

  /**
   * @param {string} name a server name from a handshake, lower case
   * @returns {Promise<{cert: string, key: string}|null>} null: refuse the handshake
   */
  certificate (name) {
    const current = this.manager.certificates.get(name)
    if (current !== undefined) return Promise.resolve(current)
    return singleFlight(this.pending, name, () => this.obtain(name).catch((err) => {
      this.log.error('acme: ' + name + ': on demand: ' + err.message)
      return null
    }))
  }

  async obtain (name) {
    if (Date.now() < (this.refused.get(name) ?? 0)) return null
    if (nameProblem(name) !== null) return this.refuse(name, 'not a name a CA issues for')
    const known = this.manager.names.get(name)
    if (known === undefined) {
      // Stored by an earlier run, or by another instance: served without asking again.
      const stored = await this.manager.issuers.readStored(name)
      if (stored !== null && stored.notAfter > Date.now()) {
        this.manager.track(name)
        this.manager.adopt(name, stored)
        this.manager.schedule(name, 0)
        return stored
      }
      const why = await this.refusal(name)
      if (why !== null) return this.refuse(name, why)
      this.started.push(Date.now())
      this.log.info('acme: ' + name + ': ordering a certificate on demand for a TLS handshake')
    } else if (known.failures > 0 && known.nextCheck > Date.now()) {
      // Its last order failed: it is tried again on its own schedule, not at every handshake.
      return null
    }
    const state = this.manager.track(name)
    // check() picks up a certificate another instance stored meanwhile, else orders under the lock.
    const done = this.manager.check(name).catch((err) => this.manager.failed(name, state, err, false))
    let timer
    const late = new Promise((resolve) => { timer = setTimeout(resolve, this.settings.timeout) })
    await Promise.race([done, late])
    clearTimeout(timer)
    return this.manager.certificates.get(name) ?? null
  }

  /**
   * Whether a certificate got on demand may be renewed: `allow` and `ask`
   * are asked again, since the customer may have gone. One that may not
   * is no longer managed (its certificate serves until it expires); one
   * whose `ask` cannot be asked is renewed, rather than lost over an outage.
   * @param {string} name
   * @returns {Promise<boolean>}
   */
  async mayRenew (name) {
    const { why, unreachable } = this.outsideAllow(name) ? { why: OUTSIDE_ALLOW, unreachable: false } : await this.ask(name)
    if (why === null || unreachable) return true
    this.log.warn('acme: ' + name + ': not renewing the certificate got on demand: ' + why + '; it serves until it expires')
    this.manager.names.delete(name)
    // Workers keep serving what they hold; none is asked for again for a while.
    this.refused.set(name, Date.now() + REFUSED_FOR_MS)
    return false
  }

  // Why the name gets no certificate, or null: the patterns, the rate, then the endpoint.
  async refusal (name) {
    if (this.outsideAllow(name)) return OUTSIDE_ALLOW
    const minuteAgo = Date.now() - MINUTE_MS
    this.started = this.started.filter((at) => at > minuteAgo)
    if (this.started.length >= this.settings.maxNewNamesPerMinute) {
      return 'already ' + this.started.length + ' new names in the last minute (acme.onDemand.maxNewNamesPerMinute)'
    }
    return (await this.ask(name)).why
  }

  outsideAllow (name) {
    return this.patterns !== null && !this.patterns.some((pattern) => pattern.test(name))
  }

  /**
   * @param {string} name
   * @returns {Promise<{why: string|null, unreachable: boolean}>} why `ask` refuses the name (null: it
   *   allows it, or there is no `ask`), and whether that is because it could not be asked
   */
  async ask (name) {
    if (this.settings.ask === null) return { why: null, unreachable: false }
    const url = new URL(this.settings.ask)
    url.searchParams.set('domain', name)
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(ASK_TIMEOUT_MS), redirect: 'manual' })
      await response.body?.cancel()
      return { why: response.status >= 200 && response.status < 300 ? null : 'acme.onDemand.ask answered ' + response.status, unreachable: false }
    } catch (err) {
      return { why: 'acme.onDemand.ask could not be asked (' + (err.cause?.code || err.name) + ')', unreachable: true }
    }
  }

  // Logged at most once a minute for all names, with how many were not.
  refuse (name, why) {
    const now = Date.now()
    if (now - this.lastLogged >= MINUTE_MS) {
      this.log.warn('acme: ' + name + ': no certificate on demand: ' + why + (this.unlogged === 0 ? '' : ' (and ' + this.unlogged + ' other refusals in the last minute)'))
      this.lastLogged = now
      this.unlogged = 0
    } else {
      this.unlogged++
    }
    this.refused.delete(name)
    if (this.refused.size >= REFUSED_MAX) this.refused.delete(this.refused.keys().next().value)
    this.refused.set(name, now + REFUSED_FOR_MS)
    return null
  }
}

module.exports = { OnDemandCertificates }
