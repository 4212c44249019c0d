'use strict'

const crypto = require('node:crypto')
const os = require('node:os')
const { AcmeStorage, certificateDates } = require('./storage')
const { StoreStorage } = require('./store-storage')
const { ChallengeAnswers } = require('./challenges')
const { svrError } = require('../errors')
const { RenewalSchedule, jittered, rateLimitWait, DAY_MS } = require('./renewal')
const { RenewalWindows, RECHECK_DEFAULT_MS } = require('./ari')
const { acmeMetricSeries, acmeSummary } = require('./metrics')

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
    this.storage = null
    this.client = null
    // name -> {cert, key, notBefore, notAfter}: what the workers serve.
    this.certificates = new Map()
    // name -> {timer, failures, lastError, nextCheck, ordering, unavailable}
    this.names = new Map()
    this.renewals = new RenewalSchedule(this.log)
    // name -> the challenge that last validated it, tried first next time.
    this.worked = new Map()
    // Order locks being removed, which a stopping process waits for (settled()).
    this.releases = new Set()
    this.challenges = new ChallengeAnswers(() => this.storage, (act, fields) => this.broadcast(act, fields))
    this.counts = { issued: 0, failed: 0 }
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
    this.storage = this.openStorage(acme)
    // Required only when used: acme-client and its crypto take the better
    // part of a second to load, which a server without it never pays.
    const { AcmeClient } = require('./client')
    this.client = new AcmeClient(acme, this.storage, this.log, this.worked)
    this.windows = new RenewalWindows(this.client, this.log)
    this.loaded = this.loadStored()
    this.loaded.then(() => this.listening).then(() => {
      for (const name of acme.names) this.schedule(name, 0)
    }, (err) => this.log.error('acme: cannot read the storage ' + this.storage.where + ': ' + err.message))
  }

  // With a fleet store (Coordinator#useStore, before the first
  // configuration) the fleet shares everything through it; else the
  // directory, which instances may share.
  openStorage (acme) {
    const disk = new AcmeStorage(acme.storageDirectory)
    const store = this.coordinator.store
    return store === null ? disk : new StoreStorage(store, disk, this.log)
  }

  stop () {
    for (const state of this.names.values()) clearTimeout(state.timer)
    this.names.clear()
    this.certificates.clear()
    this.acme = null
  }

  async loadStored () {
    await this.storage.prepare()
    for (const name of this.acme.names) {
      this.names.set(name, { timer: null, failures: 0, lastError: null, nextCheck: null, ordering: false, unavailable: null })
      const stored = await this.storage.readCertificate(name)
      if (stored !== null && stored.notAfter > Date.now()) {
        this.adopt(name, stored)
        this.log.info('acme: ' + name + ': certificate loaded from storage, valid until ' + new Date(stored.notAfter).toISOString())
      } else {
        this.log.info('acme: ' + name + ': no certificate yet; ordering one (until it arrives, TLS handshakes for this name ' +
          'get the default certificate, or fail without one)')
      }
    }
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
    await this.orderUnderLock(name, state)
  }

  async pickUpStored (name) {
    const stored = await this.storage.readCertificate(name)
    const current = this.certificates.get(name)
    if (stored === null || (current !== undefined && stored.notAfter <= current.notAfter)) return
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

  // By the dates and renewBeforeDays, or earlier when the CA's renewal window (ARI) says so.
  dueAt (name, certificate, window = Infinity) {
    return Math.min(window, this.renewals.dueAt(name, certificate, this.acme.renewBeforeDays))
  }

  async order (name, state) {
    const wait = this.renewals.admit(name, Date.now())
    if (wait !== 0) {
      this.schedule(name, wait)
      return
    }
    const renewing = this.certificates.has(name)
    this.log.info('acme: ' + name + ': ' + (renewing ? 'renewing' : 'ordering') + ' a certificate from ' + this.acme.directoryUrl + ' (' + this.client.challengesFor(name).join(', then ') + ')')
    let pair
    try {
      pair = await this.client.obtain(name, {
        http: (token, keyAuthorization) => this.challenges.openToken(token, keyAuthorization),
        httpDone: (token) => this.challenges.closeToken(token),
        alpn: (certificate) => this.challenges.openAlpn(name, certificate),
        alpnDone: () => this.challenges.closeAlpn(name)
      })
    } catch (err) {
      this.failed(name, state, err, renewing)
      return
    }
    const dates = certificateDates(pair.cert)
    await this.storage.writeCertificate(name, pair)
    this.counts.issued++
    state.failures = 0
    state.lastError = null
    this.adopt(name, { ...pair, ...dates })
    this.log.info('acme: ' + name + ': certificate issued, valid until ' + new Date(dates.notAfter).toISOString() + '; serving it')
    this.schedule(name, jittered(Math.min(this.dueAt(name, { ...pair, ...dates }) - Date.now(), CHECK_INTERVAL_MS, RECHECK_DEFAULT_MS)))
  }

  failed (name, state, err, renewing) {
    this.counts.failed++
    state.failures++
    state.lastError = this.client.describeFailure(err)
    // A CA's rate limit says when it resets (Let's Encrypt: "retry after <time> UTC"): no sooner than that.
    const delay = Math.max(Math.min(this.acme.retryDelay * 2 ** (state.failures - 1), BACKOFF_MAX_MS), rateLimitWait(state.lastError, Date.now()))
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
    return acmeMetricSeries(this.summary(), this.counts)
  }

  /**
   * Coordinator services (lib/primary/coordinator.js): the key authorization of an
   * http-01 token, a name's certificate (or open tls-alpn-01 challenge) for
   * a worker that has none yet, and the summary for the status page.
   * @returns {Object<string, Function>}
   */
  services () {
    return {
      'acme-token': (msg) => this.challenges.token(String(msg.token)),
      'acme-lookup': async (msg) => {
        await this.loaded
        const certificate = this.certificates.get(msg.name)
        return {
          cert: certificate === undefined ? null : certificate.cert,
          key: certificate === undefined ? null : certificate.key,
          alpn: this.acme === null || !this.acme.challenges.includes('tls-alpn-01') ? null : await this.challenges.alpnCertificate(msg.name)
        }
      },
      'acme-summary': () => this.summary()
    }
  }
}

module.exports = { CertificateManager }
