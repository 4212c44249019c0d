'use strict'

const crypto = require('node:crypto')
const os = require('node:os')
const { AcmeStorage, certificateDates } = require('./storage')
const { StoreStorage } = require('./store-storage')
const { ChallengeAnswers } = require('./challenges')
const { svrError } = require('../errors')
const { RenewalSchedule, jittered, DAY_MS } = require('./renewal')
const { ChainFailure } = require('./failures')
const { RenewalWindows, RECHECK_DEFAULT_MS } = require('./ari')
const { acmeMetricSeries, acmeSummary } = require('./metrics')
const { certificateServices } = require('./services')
const { OnDemandCertificates } = require('./on-demand')

// Even with nothing due, every name is checked this often: a certificate
// that another instance renewed in the shared storage is picked up, and a
// clock that jumped does not leave a renewal waiting for a far timer.
const CHECK_INTERVAL_MS = 12 * 60 * 60 * 1000
const BACKOFF_MAX_MS = DAY_MS
// How long an order lock lasts unless its holder refreshes it, and how
// often an instance that found it held looks again.
const LOCK_TTL_MS = 10 * 60 * 1000
const LOCK_POLL_MS = 2000
// How often an instance looks again for a store that was down when it
// wanted the lock.
const STORE_POLL_MS = 10000
// What a worker gets to install a tls-alpn-01 certificate before the CA is
// told to look.
const PUSH_TIMEOUT_MS = 5000

/**
 * Automatic HTTPS in the coordinator: one per primary (or single process).
 * It loads the certificates kept in storage, orders the missing ones,
 * renews them before they expire, and hands every certificate and every
 * challenge answer to the workers through the coordinator, which serve
 * them with no restart. See docs/https.md.
 */
class CertificateManager {
  /**
   * @param {import('../coordinator').Coordinator} coordinator
   */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.log = coordinator.log
    this.acme = null
    // The CAs (lib/acme/issuer-chain.js); the first one's storage holds the order locks and challenges.
    this.issuers = null
    this.storage = null
    // dns-01 (lib/acme/dns) and certificates on demand (lib/acme/on-demand.js), when configured.
    this.dns = null
    this.onDemand = null
    // name -> {cert, key, notBefore, notAfter}: what the workers serve.
    this.certificates = new Map()
    // name -> {timer, failures, lastError, nextCheck, ordering, unavailable}
    this.names = new Map()
    this.renewals = new RenewalSchedule(this.log)
    // name -> the challenge that last validated it, tried first next time.
    this.worked = new Map()
    // A CA's key -> its orders by result, for the metrics.
    this.orderCounts = new Map()
    // Order locks being removed, which a stopping process waits for (settled()).
    this.releases = new Set()
    this.challenges = new ChallengeAnswers(() => this.storage, (act, fields) => this.broadcast(act, fields))
    // Settles once the stored certificates are loaded: a worker asking for
    // one before that waits rather than failing its handshake.
    this.loaded = Promise.resolve()
    this.owner = os.hostname() + ':' + process.pid + ':' + crypto.randomBytes(4).toString('hex')
    // Settles once a worker listens: an order placed before fails its validation.
    this.listening = new Promise((resolve) => { this.workerListening = resolve })
  }

  /**
   * Take a (new) configuration: start, stop or change automatic HTTPS.
   * The same `acme` settings again change nothing, so a reload does not
   * order anew.
   * @param {object} options runtime options
   */
  configure (options) {
    const acme = options.config.acme
    const same = this.acme !== null && JSON.stringify(this.acme) === JSON.stringify(acme)
    if (same) return
    this.stop()
    this.renewals.configured()
    this.acme = acme.enabled ? acme : null
    if (this.acme === null) return
    // Required only when used: acme-client and its crypto take the better
    // part of a second to load, which a server without it never pays.
    const { IssuerChain } = require('./issuer-chain')
    this.issuers = new IssuerChain(acme, (issuer) => this.openStorage(acme, issuer), this.log, { worked: this.worked, counts: this.orderCounts })
    this.storage = this.issuers.primary.storage
    this.windows = new RenewalWindows(this.issuers, this.log)
    this.dns = acme.dns === null ? null : new (require('./dns').DnsChallenges)(acme.dns, this.log)
    this.onDemand = acme.onDemand === null ? null : new OnDemandCertificates(acme.onDemand, this)
    this.loaded = this.loadStored()
    this.loaded.then(() => this.listening).then(() => {
      for (const name of acme.names) this.schedule(name, 0)
    }, (err) => this.log.error('acme: cannot read the storage ' + this.storage.where + ': ' + err.message))
  }

  // With a fleet store (Coordinator#useStore, before the first
  // configuration) the fleet shares everything through it; else the
  // directory, which instances may share.
  openStorage (acme, issuer) {
    const disk = new AcmeStorage(acme.storageDirectory, issuer.key)
    const store = this.coordinator.store
    return store === null ? disk : new StoreStorage(store, disk, this.log)
  }

  stop () {
    for (const state of this.names.values()) clearTimeout(state.timer)
    this.names.clear()
    this.certificates.clear()
    this.acme = this.onDemand = null
  }

  async loadStored () {
    await this.issuers.prepare()
    for (const name of this.acme.names) {
      this.track(name)
      const found = await this.issuers.atStart(name)
      if (found.certificate !== null) this.adopt(name, found.certificate)
      this.log.info('acme: ' + name + ': ' + found.says)
    }
  }

  // A name's state, made when it is first managed (at start, or on demand).
  track (name) {
    if (!this.names.has(name)) this.names.set(name, { timer: null, failures: 0, lastError: null, nextCheck: null, ordering: false, unavailable: null })
    return this.names.get(name)
  }

  // Use a certificate from now on, and tell every worker.
  adopt (name, pair) {
    this.certificates.set(name, pair)
    this.broadcast('acme-install', { name, cert: pair.cert, key: pair.key })
  }

  broadcast (act, fields) {
    return Promise.all(this.coordinator.targets().map(({ peer }) => peer === null
      ? null
      : peer.request(act, fields, { timeout: PUSH_TIMEOUT_MS }).catch(() => null)))
  }

  schedule (name, delay) {
    const state = this.names.get(name)
    if (state === undefined) return
    clearTimeout(state.timer)
    state.nextCheck = Date.now() + delay
    state.timer = setTimeout(() => {
      state.timer = null
      // Storage that cannot be read or written fails the attempt like the
      // CA would, and is retried the same way.
      this.check(name).catch((err) => this.failed(name, state, err, this.certificates.has(name)))
    }, delay)
    // The manager never keeps a process alive that is otherwise done.
    state.timer.unref()
  }

  /**
   * Is the name's certificate due? Another instance may have renewed it
   * in the shared storage already; otherwise order under the lock.
   * @param {string} name
   */
  async check (name) {
    const state = this.names.get(name)
    if (state === undefined || state.ordering) return
    await this.pickUpStored(name)
    const current = this.certificates.get(name)
    const due = current === undefined ? 0 : this.dueAt(name, current, await this.windows.due(name, current, Date.now()))
    if (due > Date.now()) {
      this.schedule(name, jittered(Math.min(due - Date.now(), CHECK_INTERVAL_MS, this.windows.recheckAt(name) - Date.now())))
      return
    }
    if (current !== undefined && this.onDemand !== null && !this.acme.names.includes(name) && !(await this.onDemand.mayRenew(name))) return
    await this.orderUnderLock(name, state)
  }

  async pickUpStored (name) {
    const stored = await this.issuers.readStored(name)
    const current = this.certificates.get(name)
    if (stored === null) return
    // A configured CA's certificate replaces one of a CA switched away from while it is valid.
    const newer = current === undefined || (this.issuers.has(current.issuer) ? stored.notAfter > current.notAfter : stored.notAfter > Date.now())
    if (!newer) return
    this.adopt(name, stored)
    this.log.info('acme: ' + name + ': picked up the certificate in storage, valid until ' + new Date(stored.notAfter).toISOString())
  }

  async orderUnderLock (name, state) {
    const lock = this.storage.orderLock(name, this.owner, LOCK_TTL_MS)
    const taken = await lock.acquire()
    if (taken.unavailable !== undefined) {
      this.lockUnavailable(name, state, taken.unavailable)
      return
    }
    state.unavailable = null
    if (!taken.acquired) {
      this.log.info('acme: ' + name + ': ' + taken.holder.owner + ' is ordering it (lock until ' +
        new Date(taken.holder.expires).toISOString() + '); waiting for its certificate')
      this.schedule(name, LOCK_POLL_MS + Math.floor(Math.random() * LOCK_POLL_MS))
      return
    }
    state.ordering = true
    try {
      // The previous holder may have stored it just before letting go.
      await this.pickUpStored(name)
      const current = this.certificates.get(name)
      if (current === undefined || this.dueAt(name, current, this.windows.cached(name, current.cert)) <= Date.now()) await this.order(name, state)
      else this.schedule(name, 0)
    } finally {
      state.ordering = false
      const released = lock.release().catch((err) => this.log.warn('acme: ' + name + ': cannot remove the order lock: ' + err.message))
      this.releases.add(released)
      await released
      this.releases.delete(released)
    }
  }

  // No order without the fleet's lock: said once per outage, looked at again.
  lockUnavailable (name, state, why) {
    if (state.unavailable === null) {
      this.log.warn('acme: ' + name + ': no order while ' + why + ' (the order lock is in it)' +
        (this.certificates.has(name) ? '; the current certificate keeps serving' : '') + '; trying again every ' + STORE_POLL_MS / 1000 + ' s')
    }
    state.unavailable = why
    this.schedule(name, STORE_POLL_MS)
  }

  // By the dates and renewBeforeDays, or earlier when the CA's renewal
  // window (ARI) says so; at once for a CA switched away from.
  dueAt (name, certificate, window = Infinity) {
    if (!this.issuers.has(certificate.issuer)) return 0
    return Math.min(window, this.renewals.dueAt(name, certificate, this.acme.renewBeforeDays))
  }

  async order (name, state) {
    const wait = this.renewals.admit(name, Date.now())
    if (wait !== 0) {
      this.schedule(name, wait)
      return
    }
    const renewing = this.certificates.has(name)
    this.log.info('acme: ' + name + ': ' + (renewing ? 'renewing' : 'ordering') + ' a certificate from ' + this.issuers.plan(name))
    let pair, issuer
    try {
      ({ pair, issuer } = await this.issuers.obtain(name, this.challenges.forName(name, this.dns)))
    } catch (err) {
      if (!(err instanceof ChainFailure)) throw err // the storage's: logged once the lock is let go
      this.failed(name, state, err, renewing)
      return
    }
    const certificate = { ...pair, ...certificateDates(pair.cert), issuer: issuer.key }
    state.failures = 0
    state.lastError = null
    this.adopt(name, certificate)
    this.log.info('acme: ' + name + ': certificate issued' + (this.acme.issuers.length > 1 ? ' by ' + issuer.directoryUrl : '') +
      ', valid until ' + new Date(certificate.notAfter).toISOString() + '; serving it')
    this.schedule(name, jittered(Math.min(this.dueAt(name, certificate) - Date.now(), CHECK_INTERVAL_MS, RECHECK_DEFAULT_MS)))
  }

  // err: every CA's failure (ChainFailure), or the storage's.
  failed (name, state, err, renewing) {
    state.failures++
    state.lastError = err instanceof ChainFailure ? err.words : err.message
    // A CA's rate limit says when it resets (Let's Encrypt: "retry after <time> UTC"): no sooner than that.
    const limited = err instanceof ChainFailure ? err.rateLimitWait(Date.now()) : 0
    const delay = Math.max(Math.min(this.acme.retryDelay * 2 ** (state.failures - 1), BACKOFF_MAX_MS), limited)
    this.log.error(svrError('SVR_ERR_ACME_ORDER', [name, state.failures, state.lastError]).message +
      '; retrying in ' + Math.round(delay / 1000) + ' s' + (renewing ? '; the current certificate keeps serving' : ''))
    this.schedule(name, delay)
  }

  /** @returns {Promise<void>} once the order locks being removed are */
  settled () {
    return Promise.all(this.releases).then(() => {})
  }

  /** @returns {Array<object>} what the status page and the metrics show (lib/acme/metrics.js) */
  summary () {
    return acmeSummary(this.names, this.certificates)
  }

  /** @returns {object[]} svr_acme_* series in prom-client's JSON form */
  metrics () {
    return acmeMetricSeries(this.summary(), this.orderCounts)
  }

  /**
   * Coordinator services (lib/primary/coordinator.js), lib/acme/services.js.
   * @returns {Object<string, Function>}
   */
  services () {
    return certificateServices(this)
  }
}

module.exports = { CertificateManager }
