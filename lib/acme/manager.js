'use strict'

const crypto = require('node:crypto')
const os = require('node:os')
const { AcmeStorage, certificateDates } = require('./storage')
const { OrderLock } = require('./lock')
const { svrError } = require('../errors')
const { renewalTime, jittered, DAY_MS } = require('./renewal')
const { acmeMetricSeries } = require('./metrics')

// Even with nothing due, every name is checked this often: a certificate
// that another instance renewed in the shared storage is picked up, and a
// clock that jumped does not leave a renewal waiting for a far timer.
const CHECK_INTERVAL_MS = 12 * 60 * 60 * 1000
const BACKOFF_MAX_MS = DAY_MS
// How long an order lock lasts unless its holder refreshes it, and how
// often an instance that found it held looks again.
const LOCK_TTL_MS = 10 * 60 * 1000
const LOCK_POLL_MS = 2000
// What a worker gets to install a tls-alpn-01 certificate before the CA is
// told to look.
const PUSH_TIMEOUT_MS = 5000
// An http-01 token is base64url (whatever a worker forwards is checked again).
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/

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
    // name -> {timer, failures, lastError, nextCheck, ordering}
    this.names = new Map()
    // http-01 token -> key authorization, while a challenge is open.
    this.tokens = new Map()
    // name -> {cert, key} of a tls-alpn-01 challenge, while it is open.
    this.alpn = new Map()
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
    this.acme = acme.enabled ? acme : null
    if (this.acme === null) return
    this.storage = new AcmeStorage(acme.storageDirectory)
    // Required only when used: acme-client and its crypto take the better
    // part of a second to load, which a server without it never pays.
    const { AcmeClient } = require('./client')
    this.client = new AcmeClient(acme, this.storage, this.log)
    this.loaded = this.loadStored()
    this.loaded.then(() => this.listening).then(() => {
      for (const name of acme.names) this.schedule(name, 0)
    }, (err) => this.log.error('acme: cannot read the storage directory ' + acme.storageDirectory + ': ' + err.message))
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
      this.names.set(name, { timer: null, failures: 0, lastError: null, nextCheck: null, ordering: false })
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
    const due = current === undefined ? 0 : renewalTime(current, this.acme.renewBeforeDays)
    if (due > Date.now()) {
      this.schedule(name, jittered(Math.min(due - Date.now(), CHECK_INTERVAL_MS)))
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
    const lock = new OrderLock(this.storage.lockFile(name), this.owner, LOCK_TTL_MS)
    const taken = await lock.acquire()
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
      if (current === undefined || renewalTime(current, this.acme.renewBeforeDays) <= Date.now()) await this.order(name, state)
      else this.schedule(name, 0)
    } finally {
      state.ordering = false
      await lock.release().catch((err) => this.log.warn('acme: ' + name + ': cannot remove the order lock: ' + err.message))
    }
  }

  async order (name, state) {
    const renewing = this.certificates.has(name)
    this.log.info('acme: ' + name + ': ' + (renewing ? 'renewing' : 'ordering') + ' a certificate from ' + this.acme.directoryUrl + ' (' + this.acme.challenge + ')')
    let pair
    try {
      pair = await this.client.obtain(name, {
        http: (token, keyAuthorization) => this.openToken(token, keyAuthorization),
        httpDone: (token) => this.closeToken(token),
        alpn: (certificate) => this.openAlpn(name, certificate),
        alpnDone: () => this.closeAlpn(name)
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
    this.schedule(name, jittered(Math.min(renewalTime({ ...pair, ...dates }, this.acme.renewBeforeDays) - Date.now(), CHECK_INTERVAL_MS)))
  }

  failed (name, state, err, renewing) {
    this.counts.failed++
    state.failures++
    state.lastError = this.client.describeFailure(err)
    const delay = Math.min(this.acme.retryDelay * 2 ** (state.failures - 1), BACKOFF_MAX_MS)
    this.log.error(svrError('SVR_ERR_ACME_ORDER', [name, state.failures, state.lastError]).message +
      '; retrying in ' + Math.round(delay / 1000) + ' s' + (renewing ? '; the current certificate keeps serving' : ''))
    this.schedule(name, delay)
  }

  // The answers go into the shared storage too: behind a load balancer the
  // CA may reach another instance than this one.
  async openToken (token, keyAuthorization) {
    this.tokens.set(token, keyAuthorization)
    await this.storage.writeChallenge(token, keyAuthorization)
  }

  async closeToken (token) {
    this.tokens.delete(token)
    await this.storage.writeChallenge(token, null)
  }

  async openAlpn (name, certificate) {
    this.alpn.set(name, certificate)
    await this.storage.writeChallenge(name + '.alpn', JSON.stringify(certificate))
    await this.broadcast('acme-alpn', { name, cert: certificate.cert, key: certificate.key })
  }

  async closeAlpn (name) {
    this.alpn.delete(name)
    await this.storage.writeChallenge(name + '.alpn', null)
    await this.broadcast('acme-alpn', { name, cert: null, key: null })
  }

  async storedToken (token) {
    if (!TOKEN.test(token)) return null
    if (this.tokens.has(token)) return this.tokens.get(token)
    return this.storage === null ? null : this.storage.readChallenge(token)
  }

  async storedAlpn (name) {
    if (this.alpn.has(name)) return this.alpn.get(name)
    const stored = this.storage === null ? null : await this.storage.readChallenge(name + '.alpn')
    if (stored === null) return null
    try {
      const { cert, key } = JSON.parse(stored)
      return typeof cert === 'string' && typeof key === 'string' ? { cert, key } : null
    } catch {
      // Being written by another instance: the CA tries again.
      return null
    }
  }

  /**
   * What the status page and the metrics show.
   * @returns {Array<{name: string, notAfter: number|null, failures: number, lastError: string|null, nextCheck: number|null}>}
   */
  summary () {
    return [...this.names].map(([name, state]) => {
      const current = this.certificates.get(name)
      return { name, notAfter: current === undefined ? null : current.notAfter, failures: state.failures, lastError: state.lastError, nextCheck: state.nextCheck }
    })
  }

  /**
   * @returns {object[]} svr_acme_* series in prom-client's JSON form
   */
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
      'acme-token': (msg) => this.storedToken(String(msg.token)),
      'acme-lookup': async (msg) => {
        await this.loaded
        const certificate = this.certificates.get(msg.name)
        return {
          cert: certificate === undefined ? null : certificate.cert,
          key: certificate === undefined ? null : certificate.key,
          alpn: this.acme === null || this.acme.challenge !== 'tls-alpn-01' ? null : await this.storedAlpn(msg.name)
        }
      },
      'acme-summary': () => this.summary()
    }
  }
}

module.exports = { CertificateManager }
