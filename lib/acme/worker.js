'use strict'

const tls = require('node:tls')
const { singleFlight } = require('../util/single-flight')

// How long a handshake waits for the coordinator to say whether a name has
// a certificate (a worker forked after the certificate arrived asks once).
const LOOKUP_TIMEOUT_MS = 2000
// After the coordinator said a name has nothing yet, handshakes for it do
// not ask again for this long: the coordinator pushes the certificate when
// it comes, and this only covers a worker that was not ready for the push.
const LOOKUP_AGAIN_MS = 5000
// What a handshake waits for a certificate on demand beyond acme.onDemand.timeout
// (the decision: the `ask` endpoint and the storage).
const DEMAND_MARGIN_MS = 10000
// The protocol of a tls-alpn-01 validation (RFC 8737).
const ACME_TLS_PROTOCOL = 'acme-tls/1'

/**
 * The certificates of automatic HTTPS as one worker holds them: a secure
 * context per name, built once when the coordinator hands the certificate
 * over (`acme-install`), and the certificate of an open tls-alpn-01
 * challenge (`acme-alpn`). The SNI callback asks here first for the names
 * automatic HTTPS manages.
 */
class WorkerCertificates {
  /**
   * @param {import('../ipc').Peer} coordinator
   */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.names = new Set()
    this.options = {}
    // name -> {pem: {cert, key}, context}
    this.served = new Map()
    this.challenges = new Map()
    // name -> the coordinator lookup in flight, so a burst of handshakes asks once.
    this.lookups = new Map()
    // name -> when the coordinator last answered that it has nothing for it.
    this.missed = new Map()
    // acme.onDemand: how long a handshake waits for a certificate; 0 when off.
    this.demandTimeout = 0
    // name -> the on-demand request in flight, so a burst of handshakes asks once.
    this.demands = new Map()
  }

  /**
   * @param {object} config the configuration in use
   * @param {object} contextOptions the TLS settings every context shares (lib/tls/options.js)
   */
  configure (config, contextOptions) {
    this.names = new Set(config.acme.enabled ? config.acme.names : [])
    this.demandTimeout = config.acme.enabled && config.acme.onDemand !== null ? config.acme.onDemand.timeout + DEMAND_MARGIN_MS : 0
    this.options = contextOptions
    for (const [name, entry] of this.served) this.served.set(name, entryOf(entry.pem, contextOptions))
  }

  /**
   * @param {string} servername lower case
   * @returns {string|null} the name automatic HTTPS manages that covers it:
   *   itself, or else the wildcard of the names one label up ("*.example.com"
   *   covers "www.example.com", not "example.com" nor "a.b.example.com")
   */
  managedName (servername) {
    if (this.names.has(servername)) return servername
    const dot = servername.indexOf('.')
    if (dot <= 0) return null
    const wildcard = '*' + servername.slice(dot)
    return this.names.has(wildcard) ? wildcard : null
  }

  /**
   * The context for a managed name: an open tls-alpn-01 challenge's to a
   * validation, else the certificate's, else null (none yet). When the
   * protocol is unknown (TLS 1.2) a name without a certificate gets the
   * challenge's: there is nothing else to serve it. A worker that holds
   * neither asks the coordinator.
   * @param {string} servername lower case
   * @param {boolean|null} validation whether the client negotiated acme-tls/1, null when unknown
   * @returns {Promise<tls.SecureContext|null>}
   */
  async select (servername, validation) {
    // A validation may come for a challenge another instance of a fleet opened.
    if (validation === true ? !this.challenges.has(servername) : !this.served.has(servername) && !this.challenges.has(servername)) await this.lookup(servername, validation === true)
    const challenge = this.challenges.get(servername)
    const entry = this.served.get(servername)
    if (validation === true) return challenge === undefined ? null : challenge.context
    if (entry !== undefined) return entry.context
    return validation === null && challenge !== undefined ? challenge.context : null
  }

  /**
   * The context of a name no configuration lists, with acme.onDemand: the
   * certificate held, else the one the coordinator gets on demand.
   * @param {string} servername lower case
   * @returns {Promise<tls.SecureContext|null>} null: refuse the handshake
   */
  async demand (servername) {
    if (!this.served.has(servername)) {
      await singleFlight(this.demands, servername, () => this.coordinator.request('acme-on-demand', { name: servername }, { timeout: this.demandTimeout }).then((answer) => {
        if (answer.cert !== null) this.install({ name: servername, cert: answer.cert, key: answer.key })
      }, () => null))
    }
    const entry = this.served.get(servername)
    return entry === undefined ? null : entry.context
  }

  // A validation always asks: its challenge may be minutes younger than the last answer.
  lookup (name, always) {
    const missed = this.missed.get(name)
    if (!always && missed !== undefined && Date.now() - missed < LOOKUP_AGAIN_MS) return Promise.resolve()
    return singleFlight(this.lookups, name, () => this.coordinator.request('acme-lookup', { name }, { timeout: LOOKUP_TIMEOUT_MS }).then((answer) => {
      if (answer.cert !== null && !this.served.has(name)) this.install({ name, cert: answer.cert, key: answer.key })
      if (answer.alpn !== null) this.challenge({ name, ...answer.alpn })
      if (answer.cert === null && answer.alpn === null) this.missed.set(name, Date.now())
      else this.missed.delete(name)
    }, () => null))
  }

  /**
   * Serve a new certificate for a name from the next handshake on;
   * connections already open keep theirs.
   * @param {{name: string, cert: string, key: string}} msg
   * @returns {boolean}
   */
  install ({ name, cert, key }) {
    this.served.set(name, entryOf({ cert, key }, this.options))
    return true
  }

  /**
   * Open (cert and key) or close (null) a tls-alpn-01 challenge.
   * @param {{name: string, cert: string|null, key: string|null}} msg
   * @returns {boolean}
   */
  challenge ({ name, cert, key }) {
    if (cert === null) this.challenges.delete(name)
    else this.challenges.set(name, entryOf({ cert, key }, {}))
    return true
  }
}

function entryOf (pem, contextOptions) {
  return { pem, context: tls.createSecureContext({ ...contextOptions, cert: pem.cert, key: pem.key }) }
}

module.exports = { WorkerCertificates, ACME_TLS_PROTOCOL }
