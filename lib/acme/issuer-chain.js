'use strict'

const { AcmeClient } = require('./client')
const { ChainFailure } = require('./failures')

/**
 * The certificate authorities of one `acme` configuration, in order, each
 * with its storage (its own folder, or keys in the fleet store) and its
 * client: a name's order goes to the first and falls to the next when one
 * fails, and the certificate served is the newest any of them issued.
 */
class IssuerChain {
  /**
   * @param {object} acme the configuration's `acme`, resolved (lib/acme/config.js)
   * @param {(issuer: object) => object} openStorage the storage of one CA
   * @param {object} log
   * @param {{worked: Map<string, string>, counts: Map<string, {issued: number, failed: number}>}} kept
   *   by the manager across configurations: name -> the challenge that
   *   last validated it, and a CA's key -> its orders by result
   */
  constructor (acme, openStorage, log, { worked, counts }) {
    const clients = new Set()
    this.log = log
    this.entries = acme.issuers.map((issuer) => {
      const storage = openStorage(issuer)
      if (!counts.has(issuer.key)) counts.set(issuer.key, { issued: 0, failed: 0 })
      return { issuer, storage, client: new AcmeClient(acme, issuer, storage, log, { worked, clients }), counts: counts.get(issuer.key) }
    })
    this.keys = new Set(acme.issuers.map((issuer) => issuer.key))
    // The first CA's storage holds the order locks, and (like every
    // other) the challenge answers.
    this.primary = this.entries[0]
  }

  async prepare () {
    for (const { storage } of this.entries) await storage.prepare()
  }

  /**
   * @param {string} key a CA's key
   * @returns {boolean} whether it is configured (not one switched away from)
   */
  has (key) {
    return this.keys.has(key)
  }

  /**
   * @param {string} name
   * @returns {Promise<{cert: string, key: string, notBefore: number, notAfter: number, issuer: string}|null>}
   *   the newest stored certificate of the name from a configured CA
   */
  async readStored (name) {
    let newest = null
    for (const { issuer, storage } of this.entries) {
      const pair = await storage.readCertificate(name)
      if (pair !== null && (newest === null || pair.notAfter > newest.notAfter)) newest = { ...pair, issuer: issuer.key }
    }
    return newest
  }

  /**
   * What to serve for a configured name at start, and what to log of it.
   * @param {string} name
   * @returns {Promise<{certificate: object|null, says: string}>}
   */
  async atStart (name) {
    const stored = await this.readStored(name)
    if (stored !== null && stored.notAfter > Date.now()) {
      return { certificate: stored, says: 'certificate loaded from storage, valid until ' + new Date(stored.notAfter).toISOString() }
    }
    const leftover = await this.leftover(name)
    if (leftover !== null) {
      const from = leftover.issuer === '' ? 'an earlier build\'s storage' : leftover.issuer + ', a CA no longer configured,'
      return { certificate: leftover, says: 'serving the certificate of ' + from + ' until one is issued' }
    }
    return {
      certificate: null,
      says: 'no certificate yet; ordering one (until it arrives, TLS handshakes for this name get the default certificate, or fail without one)'
    }
  }

  /**
   * @param {string} name
   * @returns {Promise<object|null>} a valid certificate of the name from a CA no longer configured
   */
  leftover (name) {
    return this.primary.storage.leftover(name, this.keys)
  }

  /**
   * The CA's renewal information of a certificate, from the CA that issued it.
   * @param {string} pem
   * @param {string} key the issuing CA's
   * @returns {Promise<object|null>} null for a CA no longer configured
   */
  renewalInfo (pem, key) {
    const entry = this.entries.find(({ issuer }) => issuer.key === key)
    return entry === undefined ? Promise.resolve(null) : entry.client.renewalInfo(pem)
  }

  /**
   * Order from each CA in turn until one issues; stored with that CA.
   * @param {string} name
   * @param {object} answer publishes the challenge answers (AcmeClient#obtain)
   * @returns {Promise<{pair: {cert: string, key: string}, issuer: object}>}
   * @throws {ChainFailure} when every CA failed
   */
  async obtain (name, answer) {
    const failures = []
    for (const [i, entry] of this.entries.entries()) {
      let pair
      try {
        pair = await entry.client.obtain(name, answer)
      } catch (err) {
        entry.counts.failed++
        failures.push({ issuer: entry.issuer, err, words: entry.client.describeFailure(err) })
        const next = this.entries[i + 1]
        if (next !== undefined) {
          this.log.warn('acme: ' + name + ': ' + entry.issuer.directoryUrl + ' failed: ' + failures[i].words + '; trying ' + next.issuer.directoryUrl)
        }
        continue
      }
      entry.counts.issued++
      // Not caught: storage that cannot be written fails the attempt,
      // which is retried, rather than ordering again from the next CA.
      await entry.storage.writeCertificate(name, pair)
      return { pair, issuer: entry.issuer }
    }
    throw new ChainFailure(failures)
  }

  /**
   * @param {string} name
   * @returns {string} what an order of the name will try, for the log
   */
  plan (name) {
    const challenges = this.primary.client.challengesFor(name).join(', then ')
    return this.entries.map(({ issuer }) => issuer.directoryUrl).join(', then ') + ' (' + challenges + ')'
  }
}

module.exports = { IssuerChain }
