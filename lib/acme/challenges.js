'use strict'

// An http-01 token is base64url (whatever a worker forwards is checked again).
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/

/**
 * The answers to the open challenges of the certificate manager: its own
 * in memory, and in its storage too, since behind a load balancer the CA
 * may reach another instance than the one that ordered; an instance asked
 * for a token it did not publish looks there.
 */
class ChallengeAnswers {
  /**
   * @param {() => object|null} storage the manager's storage of the moment
   * @param {(act: string, fields: object) => Promise<*>} broadcast to every worker
   */
  constructor (storage, broadcast) {
    this.storage = storage
    this.broadcast = broadcast
    // http-01 token -> key authorization, while a challenge is open.
    this.tokens = new Map()
    // name -> {cert, key} of a tls-alpn-01 challenge, while it is open.
    this.alpn = new Map()
  }

  /**
   * What AcmeClient#obtain publishes and withdraws the answers for one name through.
   * @param {string} name
   * @param {import('./dns').DnsChallenges|null} dns
   * @returns {object}
   */
  forName (name, dns) {
    return {
      http: (token, keyAuthorization) => this.openToken(token, keyAuthorization),
      httpDone: (token) => this.closeToken(token),
      alpn: (certificate) => this.openAlpn(name, certificate),
      alpnDone: () => this.closeAlpn(name),
      dns: (identifier, value) => dns.put(identifier, value),
      dnsDone: (identifier, value) => dns.remove(identifier, value)
    }
  }

  async openToken (token, keyAuthorization) {
    this.tokens.set(token, keyAuthorization)
    await this.storage().writeChallenge(token, keyAuthorization)
  }

  async closeToken (token) {
    this.tokens.delete(token)
    await this.storage().writeChallenge(token, null)
  }

  async openAlpn (name, certificate) {
    this.alpn.set(name, certificate)
    await this.storage().writeChallenge(name + '.alpn', JSON.stringify(certificate))
    await this.broadcast('acme-alpn', { name, cert: certificate.cert, key: certificate.key })
  }

  async closeAlpn (name) {
    this.alpn.delete(name)
    await this.storage().writeChallenge(name + '.alpn', null)
    await this.broadcast('acme-alpn', { name, cert: null, key: null })
  }

  /**
   * @param {string} token
   * @returns {Promise<string|null>} its key authorization, null when no instance published it
   */
  async token (token) {
    if (!TOKEN.test(token)) return null
    if (this.tokens.has(token)) return this.tokens.get(token)
    const storage = this.storage()
    return storage === null ? null : storage.readChallenge(token)
  }

  /**
   * @param {string} name
   * @returns {Promise<{cert: string, key: string}|null>} the open tls-alpn-01 certificate of the name
   */
  async alpnCertificate (name) {
    if (this.alpn.has(name)) return this.alpn.get(name)
    const storage = this.storage()
    const stored = storage === null ? null : await storage.readChallenge(name + '.alpn')
    if (stored === null) return null
    try {
      const { cert, key } = JSON.parse(stored)
      return typeof cert === 'string' && typeof key === 'string' ? { cert, key } : null
    } catch {
      // Being written by another instance: the CA tries again.
      return null
    }
  }
}

module.exports = { ChallengeAnswers }
