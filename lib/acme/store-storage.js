'use strict'

const { certificateDates, pairMatches } = require('./storage')
const { StoreLock } = require('./store-lock')
const { PREFIX, isSealed } = require('../store/sealing')

// An answer to a challenge outlives any validation: a crashed orderer's
// tokens go on their own.
const CHALLENGE_TTL_MS = 60 * 60 * 1000
// Replace a value only if it is still the one read (a compare-and-set):
// another instance may have put its own in between.
const REPLACE_IF_SAME = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0"
// Set a value unless it holds an encrypted key (ARGV[2] is how one starts
// in the JSON): an instance without store.keyFile never writes a plain key
// over one.
const SET_UNLESS_SEALED = "local v = redis.call('GET', KEYS[1]) if v and string.find(v, ARGV[2], 1, true) then return 0 end " +
  "redis.call('SET', KEYS[1], ARGV[1]) return 1"
const SEALED_KEY_IN_JSON = '"key":"' + PREFIX

/**
 * What automatic HTTPS keeps, in the fleet's store (`store`), with the
 * methods of AcmeStorage, so that instances share the account, the
 * certificates, the challenge answers and the order lock with no shared
 * directory:
 *   acme:<issuer>:account      the account key at one CA (the first written wins)
 *   acme:<issuer>:cert:<name>  {cert, key} of one name from that CA, as JSON
 *   acme:<issuer>:lock:<name>  who orders the name (lib/acme/store-lock.js)
 *   acme:challenge:<id>        an open challenge's answer, expiring
 * <issuer> is the CA's key (lib/acme/issuers.js), as on disk.
 * Private keys are sealed when `store.keyFile` is set (lib/store/sealing.js).
 * Every certificate is written through to the instance's own storage
 * directory too, and read from there while the store is down, so that an
 * instance started without the store serves what it had.
 */
class StoreStorage {
  /**
   * @param {import('../store/fleet-store').FleetStore} store
   * @param {import('./storage').AcmeStorage} disk the instance's own directory
   * @param {{warn: Function}} log
   */
  constructor (store, disk, log) {
    this.store = store
    this.disk = disk
    this.log = log
    this.where = 'the store (and ' + disk.dir + ')'
    this.sealer = store.sealer
    this.prefix = 'acme:' + disk.issuer + ':'
    this.accountName = this.prefix + 'account'
  }

  async prepare () {
    await this.disk.prepare()
  }

  /**
   * The fleet's account key: the store's, else this instance's own (made
   * when it has none) offered with SET NX, the first instance's winning. An
   * unencrypted one while store.keyFile is set is not used but replaced
   * with this instance's, encrypted (a store filled before the key file,
   * or a planted key).
   * @param {() => Promise<string|Buffer>} create
   * @returns {Promise<{pem: string, created: boolean}>}
   */
  async accountKey (create) {
    const { client } = this.requireUp()
    const current = await client.get(this.accountName)
    const stored = this.openKey('the account key', this.accountName, current)
    if (stored !== null) return { pem: stored, created: false }
    const own = await this.disk.accountKey(create)
    const sealed = this.sealer.seal(own.pem, this.accountName)
    const placed = current === null
      ? await client.set(this.accountName, sealed, 'NX') === 'OK'
      : this.sealer.key !== null && !isSealed(current) && await client.eval(REPLACE_IF_SAME, 1, this.accountName, current, sealed) === 1
    if (placed) return own
    const winner = this.openKey('the account key', this.accountName, await client.get(this.accountName))
    if (winner === null) throw new Error('the store holds an account key that cannot be used')
    return { pem: winner, created: false }
  }

  /**
   * The newer of the store's certificate and the one on disk; the other
   * side gets it, so that the disk can serve after a restart without the
   * store, and a certificate stored while the store was down (or that an
   * instance had before it joined the fleet) reaches the fleet.
   * @param {string} name
   * @returns {Promise<{cert: string, key: string, notAfter: number, notBefore: number}|null>}
   */
  async readCertificate (name) {
    const local = await this.disk.readCertificate(name)
    if (!this.store.up) return local
    let shared
    try {
      shared = await this.sharedCertificate(name)
    } catch {
      return local
    }
    if (shared.pair !== null && (local === null || shared.pair.notAfter > local.notAfter)) {
      await this.disk.writeCertificate(name, shared.pair).catch((err) => {
        this.log.warn('acme: ' + name + ': cannot keep the store\'s certificate on disk too (' + (err.code || err.message) +
          '); it is served, but a restart while the store is down would not find it')
      })
      return shared.pair
    }
    if (local !== null && (shared.notAfter === null || local.notAfter > shared.notAfter)) await this.putCertificate(name, local).catch(() => {})
    return local
  }

  // The store's pair of a name; notAfter also when its key cannot be
  // opened here, so that an older certificate on disk does not replace it.
  async sharedCertificate (name) {
    const value = await this.store.client.get(this.certificateKey(name))
    if (value === null) return { pair: null, notAfter: null }
    let stored
    try {
      stored = JSON.parse(value)
    } catch {
      return { pair: null, notAfter: null }
    }
    const dates = typeof stored.cert === 'string' ? certificateDates(stored.cert) : null
    if (dates === null) return { pair: null, notAfter: null }
    const key = this.openKey('the key of ' + name, this.certificateKey(name), typeof stored.key === 'string' ? stored.key : null)
    if (key === null || !pairMatches(stored.cert, key)) return { pair: null, notAfter: dates.notAfter }
    return { pair: { cert: stored.cert, key, ...dates }, notAfter: dates.notAfter }
  }

  /**
   * On disk first: should the store fail, the instance still has it, and
   * the next read offers it to the store again.
   * @param {string} name
   * @param {{cert: string, key: string}} pair
   */
  async writeCertificate (name, pair) {
    await this.disk.writeCertificate(name, pair)
    try {
      await this.putCertificate(name, pair)
    } catch (err) {
      this.log.warn('acme: ' + name + ': cannot put the certificate in the store (' + (err.code || err.message) +
        '); it is kept on disk and offered again when the store answers')
    }
  }

  async putCertificate (name, { cert, key }) {
    const value = JSON.stringify({ cert, key: this.sealer.seal(key, this.certificateKey(name)) })
    if (this.sealer.key !== null) {
      await this.store.client.set(this.certificateKey(name), value)
      return
    }
    const placed = await this.store.client.eval(SET_UNLESS_SEALED, 1, this.certificateKey(name), value, SEALED_KEY_IN_JSON)
    if (placed === 0) throw new Error('the store holds it encrypted and "store.keyFile" is not set here')
  }

  /**
   * Only in the store: the CA may ask any instance. Failing while the
   * store is down fails the order, which is retried.
   * @param {string} id
   * @param {string|null} answer
   */
  async writeChallenge (id, answer) {
    const { client } = this.requireUp()
    if (answer === null) await client.del('acme:challenge:' + id)
    else await client.set('acme:challenge:' + id, answer, 'PX', CHALLENGE_TTL_MS)
  }

  /**
   * @param {string} id
   * @returns {Promise<string|null>} null also while the store is down
   */
  async readChallenge (id) {
    if (!this.store.up) return null
    return this.store.client.get('acme:challenge:' + id).catch(() => null)
  }

  /**
   * @param {string} name
   * @param {string} owner
   * @param {number} ttl
   * @returns {StoreLock}
   */
  orderLock (name, owner, ttl) {
    return new StoreLock(this.store, this.prefix + 'lock:' + name, owner, ttl)
  }

  // Certificates of other CAs are looked for on this instance's disk only.
  leftover (name, configured) {
    return this.disk.leftover(name, configured)
  }

  certificateKey (name) {
    return this.prefix + 'cert:' + name
  }

  requireUp () {
    if (!this.store.up) throw new Error('the store is down')
    return this.store
  }

  // A key that does not open here (another key file, or none) is logged
  // and counts as absent: never a crash, and never used.
  openKey (what, name, value) {
    if (value === null) return null
    try {
      return this.sealer.open(value, name)
    } catch (err) {
      this.log.warn('acme: ' + what + ' in the store cannot be used: ' + err.message)
      return null
    }
  }
}

module.exports = { StoreStorage, CHALLENGE_TTL_MS }
