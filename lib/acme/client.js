'use strict'

const fs = require('node:fs/promises')
const https = require('node:https')
const tls = require('node:tls')
const acme = require('acme-client')
const axios = require('axios')
const { svrError } = require('../errors')
const { certificateId, suggestedWindow, recheckDelay } = require('./ari')
const { readEabKey } = require('./check')
const { explainFailure } = require('./failures')
const { challengesForName } = require('./names')

// Every request to the CA gives up after this long, so that a CA that
// accepts the connection and never answers cannot hold an order (and its
// lock) for ever.
const REQUEST_TIMEOUT_MS = 30000
// acme-client retries a request that failed on the network or with 429/5xx
// (honouring Retry-After) five times by default, over more than a minute;
// one retry covers a blip, and the manager's back-off does the rest.
const REQUEST_RETRIES = 1
// Failures another challenge would meet as well.
const NOT_THE_CHALLENGE = new Set(['SVR_ERR_ACME_UNREACHABLE', 'SVR_ERR_ACME_UNTRUSTED'])
// OpenSSL's verdicts on a server certificate that Node does not trust.
const TLS_TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID'
])

/**
 * The ACME protocol for the certificate manager, through `acme-client`
 * (RFC 8555, maintained, with the account, order, challenge and finalize
 * steps and the CA's Retry-After handled): one CA, with one account per
 * storage directory, one order per name, answered by `http-01` or
 * `tls-alpn-01`.
 */
class AcmeClient {
  /**
   * @param {object} settings the configuration's `acme`
   * @param {object} issuer the CA, an entry of settings.issuers (lib/acme/issuers.js)
   * @param {import('./storage').AcmeStorage} storage the CA's
   * @param {object} log
   * @param {{worked?: Map<string, string>, clients?: Set<AcmeClient>}} [shared] with the manager's other clients:
   *   worked: name -> the challenge that last validated it (kept across reloads);
   *   clients: every client, told of each network failure (see configureHttp)
   */
  constructor (settings, issuer, storage, log, { worked = new Map(), clients = new Set() } = {}) {
    this.settings = settings
    this.issuer = issuer
    this.storage = storage
    this.log = log
    this.worked = worked
    this.clients = clients
    clients.add(this)
    this.origin = new URL(issuer.directoryUrl).origin
    this.client = null
    // The network failure of the order under way (see configureHttp).
    this.networkError = null
    // Whether the CA took the order under way.
    this.orderPlaced = false
  }

  async connect () {
    if (this.client !== null) return this.client
    await configureHttp(this.settings.caBundle, (err) => {
      for (const client of this.clients) client.noteNetworkError(err)
    })
    const { pem, created } = await this.storage.accountKey(() => acme.crypto.createPrivateEcdsaKey())
    if (created) this.log.info('acme: made a new account key in ' + this.storage.where)
    const { directoryUrl, eab, profile } = this.issuer
    const options = { directoryUrl, accountKey: pem }
    // Read here, in the primary, when the account is registered: the key never reaches the workers.
    if (eab !== null) options.externalAccountBinding = { kid: eab.keyId, hmacKey: await readEabKey(eab) }
    const client = new acme.Client(options)
    // acme-client 5.4 knows no profiles; its auto() places the order
    // through createOrder, which sends what it is given. Whether the CA took
    // the order tells whether another challenge could fare better.
    client.createOrder = async (data) => {
      const order = await acme.Client.prototype.createOrder.call(client, profile === null ? data : { ...data, profile })
      this.orderPlaced = true
      return order
    }
    this.client = client
    return client
  }

  // The adapter reports every request's network failure; this client's are
  // those to its CA.
  noteNetworkError (err) {
    const url = err.config === undefined ? '' : String(err.config.url)
    if (url.startsWith(this.origin + '/')) this.networkError = err
  }

  /**
   * @param {string} name
   * @returns {string[]} the challenges to try for it, the one that worked last first
   */
  challengesFor (name) {
    const challenges = challengesForName(name, this.settings.challenges)
    const last = this.worked.get(name)
    return challenges.includes(last) ? [last, ...challenges.filter((type) => type !== last)] : challenges
  }

  /**
   * Order, validate and fetch a certificate for one name, with each
   * challenge in turn until one is validated (a CA that cannot be reached,
   * or one that refuses for its rate limits, is not asked again).
   * @param {string} name
   * @param {{http: Function, httpDone: Function, alpn: Function, alpnDone: Function, dns: Function, dnsDone: Function}} answer
   *   publish and withdraw the answer to a challenge: http(token, keyAuthorization), alpn({cert, key}),
   *   dns(identifier, value)
   * @returns {Promise<{cert: string, key: string}>} the chain (leaf first) and its new private key
   */
  async obtain (name, answer) {
    const types = this.challengesFor(name)
    for (let i = 0; ; i++) {
      try {
        const pair = await this.orderOnce(name, answer, types[i])
        this.worked.set(name, types[i])
        return pair
      } catch (err) {
        // A CA that refused the account or the order itself (a name its
        // policy forbids, a profile it lacks) would refuse it for any challenge.
        if (i === types.length - 1 || !this.orderPlaced || NOT_THE_CHALLENGE.has(err.code) || rateLimited(err)) throw err
        this.log.warn('acme: ' + name + ': ' + types[i] + ' failed: ' + this.describeFailure(err) + '; trying ' + types[i + 1])
      }
    }
  }

  async orderOnce (name, answer, type) {
    this.networkError = null
    this.orderPlaced = false
    try {
      return await this.order(name, answer, type)
    } catch (err) {
      // A CA that forgot the account (a test CA restarted) gets it
      // registered again with the same key on the next attempt.
      this.client = null
      // Only the library's TypeError stands for a request without a
      // response; a CA's refusal after a retried blip keeps its own words.
      if (this.networkError === null || !(err instanceof TypeError)) throw err
      const { code, message } = this.networkError
      // A trust failure is no network failure: the CA answered, with a certificate that does not verify.
      // Node 24 appends a hint about --use-system-ca after a semicolon; the
      // hint svr gives (acme.caBundle) is the one that applies here.
      if (TLS_TRUST_CODES.has(code)) throw svrError('SVR_ERR_ACME_UNTRUSTED', [code + ': ' + message.split('; ')[0]], { cause: err })
      throw svrError('SVR_ERR_ACME_UNREACHABLE', [code || message], { cause: err })
    }
  }

  async order (name, answer, type) {
    const client = await this.connect()
    const [key, csr] = await acme.crypto.createCsr({ commonName: name, altNames: [name] }, await certificateKey(this.issuer.keyType))
    const cert = await client.auto({
      csr,
      email: this.settings.email === '' ? null : this.settings.email,
      termsOfServiceAgreed: this.settings.agreeToTerms,
      challengePriority: [type],
      // acme-client would fetch the token from port 80 of the name itself
      // first; the CA does that, and behind NAT or a load balancer this
      // process may not reach its own public address.
      skipChallengeVerification: true,
      challengeCreateFn: async (authz, challenge, keyAuthorization) => {
        if (challenge.type !== type) throw svrError('SVR_ERR_ACME_CHALLENGE', [type, name])
        if (type === 'http-01') {
          await answer.http(challenge.token, keyAuthorization)
          return
        }
        // For dns-01 acme-client gives the record's value (the key authorization's digest).
        if (type === 'dns-01') {
          await answer.dns(authz.identifier.value, keyAuthorization)
          return
        }
        // An EC key like the certificates': OpenSSL keeps the default
        // certificate's EC slot across the SNI switch and would prefer it
        // to an RSA challenge certificate.
        const [alpnKey, alpnCert] = await acme.crypto.createAlpnCertificate(authz, keyAuthorization, await acme.crypto.createPrivateEcdsaKey())
        await answer.alpn({ cert: String(alpnCert), key: String(alpnKey) })
      },
      challengeRemoveFn: async (authz, challenge, keyAuthorization) => {
        if (type === 'http-01') await answer.httpDone(challenge.token)
        else if (type === 'dns-01') await answer.dnsDone(authz.identifier.value, keyAuthorization)
        else await answer.alpnDone()
      }
    })
    return { cert: String(cert), key: String(key) }
  }

  /**
   * The CA's suggested renewal window for a certificate (RFC 9773).
   * @param {string} pem the certificate
   * @returns {Promise<{window: {start: number, end: number}, recheck: number}|null>}
   *   null when the CA offers no renewal information or the certificate has no identifier for it
   * @throws {Error} when the CA cannot be asked, or answers no valid window
   */
  async renewalInfo (pem) {
    const client = await this.connect()
    const directory = await client.http.getDirectory()
    if (typeof directory.renewalInfo !== 'string') return null
    const id = certificateId(pem)
    if (id === null) return null
    const response = await acme.axios.get(directory.renewalInfo.replace(/\/+$/, '') + '/' + id)
    const window = suggestedWindow(response.data)
    if (window === null) throw new Error('its answer has no valid suggestedWindow')
    return { window, recheck: recheckDelay(response.headers['retry-after'], Date.now()) }
  }

  /**
   * @param {Error} err from an order
   * @returns {string} what went wrong, in the CA's words when it gave some
   */
  describeFailure (err) {
    // Failures of svr's own making (an unreachable or untrusted CA) say what to do already.
    if (typeof err.code === 'string' && err.code.startsWith('SVR_ERR_')) return caError(err)
    return explainFailure(caError(err), this.issuer)
  }
}

/**
 * acme-client sends its requests through one axios instance of its own;
 * the extra CA bundle, the timeout and the retries are set on it. Only the certificate
 * manager in the primary uses the library, with one `acme` configuration
 * (one CA bundle for every CA) at a time. acme-client 5.4 turns a request that got no response (CA
 * unreachable) into a TypeError about a missing response, so the adapter
 * reports the real failure first.
 * @param {string|null} caBundle PEM file
 * @param {(err: Error) => void} onNetworkError
 */
async function configureHttp (caBundle, onNetworkError) {
  const send = axios.getAdapter('http')
  acme.axios.defaults.adapter = (config) => send(config).catch((err) => {
    if (err.response === undefined) onNetworkError(err)
    throw err
  })
  acme.axios.defaults.timeout = REQUEST_TIMEOUT_MS
  acme.axios.defaults.acmeSettings.retryMaxAttempts = REQUEST_RETRIES
  if (caBundle === null) {
    acme.axios.defaults.httpsAgent = undefined
    return
  }
  const extra = await fs.readFile(caBundle, 'utf8')
  acme.axios.defaults.httpsAgent = new https.Agent({ ca: [...tls.rootCertificates, extra] })
}

// A new private key of the configured type (acme.keyType), PEM.
function certificateKey (type) {
  switch (type) {
    case 'ecdsa-p384': return acme.crypto.createPrivateEcdsaKey('P-384')
    case 'rsa2048': return acme.crypto.createPrivateRsaKey(2048)
    case 'rsa4096': return acme.crypto.createPrivateRsaKey(4096)
    default: return acme.crypto.createPrivateEcdsaKey('P-256')
  }
}

// RFC 8555's rateLimited problem, or a 429 without a document.
function rateLimited (err) {
  const response = err.response
  if (response !== undefined && response.status === 429) return true
  return /rateLimited|rate limit/i.test(err.message)
}

// The CA's problem document says what went wrong; other errors (the CA
// unreachable) have only their message. Neither carries a key.
function caError (err) {
  const detail = err.response && err.response.data && err.response.data.detail
  return typeof detail === 'string' ? detail : err.message
}

module.exports = { AcmeClient }
