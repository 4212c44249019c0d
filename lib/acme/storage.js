'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { OrderLock } = require('./lock')

// Private keys and the account are readable by the service user only; the
// directories keep others from even listing the names.
const KEY_MODE = 0o600
const DIR_MODE = 0o700

/**
 * What automatic HTTPS keeps on disk, in one directory that several
 * instances may share:
 *   <issuer>/account.key            the ACME account's private key at one CA (made once)
 *   <issuer>/certificates/<name>/   cert.pem (the chain) and key.pem of one name
 *   <issuer>/locks/<name>.lock      who orders the name, until when (lib/acme/lock.js)
 *   challenges/<token>     the answer to an open http-01 challenge, and
 *   challenges/<name>.alpn the certificate of an open tls-alpn-01 one, so that
 *                          the instance the CA happens to reach answers it
 * <issuer> is the CA's key (lib/acme/issuers.js): one AcmeStorage per CA,
 * sharing the challenges. Every file is written under a temporary name and
 * renamed into place, so a reader (another instance, or the next start)
 * sees the old or the new file, never half of one.
 */
class AcmeStorage {
  /**
   * @param {string} dir absolute storage directory
   * @param {string} issuer the CA's key, the folder of its account and certificates
   */
  constructor (dir, issuer) {
    this.dir = dir
    this.issuer = issuer
    this.issuerDir = path.join(dir, issuer)
    this.where = this.issuerDir
  }

  /**
   * @returns {Promise<void>} the directory and its subdirectories exist (0700)
   */
  async prepare () {
    await fs.mkdir(path.join(this.dir, 'challenges'), { recursive: true, mode: DIR_MODE })
    for (const sub of ['', 'certificates', 'locks']) await fs.mkdir(path.join(this.issuerDir, sub), { recursive: true, mode: DIR_MODE })
  }

  /**
   * The account key, made and kept (0600) the first time.
   * @param {() => Promise<string|Buffer>} create makes a new PEM key
   * @returns {Promise<{pem: string, created: boolean}>}
   */
  async accountKey (create) {
    const file = path.join(this.issuerDir, 'account.key')
    const existing = await readOrNull(file)
    if (existing !== null) return { pem: existing, created: false }
    const pem = String(await create())
    try {
      // 'wx': when two instances start at once, the first key written wins
      // and the other reads it, so both use one account.
      await fs.writeFile(file, pem, { mode: KEY_MODE, flag: 'wx' })
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
      return { pem: await fs.readFile(file, 'utf8'), created: false }
    }
    return { pem, created: true }
  }

  /**
   * @param {string} name
   * @returns {Promise<{cert: string, key: string, notAfter: number, notBefore: number}|null>}
   *   the stored certificate of the name, null when there is none or it does not parse
   */
  async readCertificate (name) {
    const dir = this.certificateDir(name)
    const cert = await readOrNull(path.join(dir, 'cert.pem'))
    const key = await readOrNull(path.join(dir, 'key.pem'))
    if (cert === null || key === null) return null
    const dates = certificateDates(cert)
    // A key that is not the certificate's (the new key stored, then writing
    // the certificate failed or the process died) would fail every handshake
    // for the name until its renewal months later: counted as no certificate,
    // a new one is ordered at once.
    if (dates === null || !pairMatches(cert, key)) return null
    return { cert, key, ...dates }
  }

  /**
   * Store a new certificate and its key (0600), key first: a reader that
   * finds the new chain finds its key too, as both are renamed in turn
   * and readers take the pair only when it matches (readCertificate).
   * @param {string} name
   * @param {{cert: string, key: string}} pair PEM
   */
  async writeCertificate (name, { cert, key }) {
    const dir = this.certificateDir(name)
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE })
    await writeAtomic(path.join(dir, 'key.pem'), key)
    await writeAtomic(path.join(dir, 'cert.pem'), cert)
  }

  /**
   * Publish (a string) or withdraw (null) the answer to a challenge.
   * @param {string} id an http-01 token, or a name + ".alpn"
   * @param {string|null} answer
   */
  async writeChallenge (id, answer) {
    const file = this.challengeFile(id)
    if (answer === null) await fs.rm(file, { force: true })
    else await writeAtomic(file, answer)
  }

  /**
   * @param {string} id
   * @returns {Promise<string|null>} the answer another instance published, null when none
   */
  readChallenge (id) {
    return readOrNull(this.challengeFile(id))
  }

  challengeFile (id) {
    return path.join(this.dir, 'challenges', fileName(id))
  }

  certificateDir (name) {
    return path.join(this.issuerDir, 'certificates', fileName(name))
  }

  lockFile (name) {
    return path.join(this.issuerDir, 'locks', fileName(name) + '.lock')
  }

  /**
   * The newest valid certificate of a name that another CA's folder holds
   * (or the top of the directory, from before folders per CA): served,
   * after switching CAs, until a configured one has issued.
   * @param {string} name
   * @param {Set<string>} configured the keys of the CAs configured, not looked at
   * @returns {Promise<{cert: string, key: string, notAfter: number, notBefore: number, issuer: string}|null>}
   */
  async leftover (name, configured) {
    let entries
    try {
      entries = await fs.readdir(this.dir, { withFileTypes: true })
    } catch (err) {
      if (err.code === 'ENOENT') return null
      throw err
    }
    // '' is the top of the directory, where builds before folders per CA kept certificates.
    const folders = ['', ...entries.filter((entry) => entry.isDirectory() && entry.name !== 'challenges' && !configured.has(entry.name)).map((entry) => entry.name)]
    let newest = null
    for (const folder of folders) {
      const pair = await new AcmeStorage(this.dir, folder).readCertificate(name).catch(() => null)
      if (pair !== null && pair.notAfter > Date.now() && (newest === null || pair.notAfter > newest.notAfter)) newest = { ...pair, issuer: folder }
    }
    return newest
  }

  /**
   * @param {string} name
   * @param {string} owner who we are
   * @param {number} ttl ms
   * @returns {OrderLock} the name's order lock, not yet taken
   */
  orderLock (name, owner, ttl) {
    return new OrderLock(this.lockFile(name), owner, ttl)
  }
}

// Names are validated DNS names (lib/acme/names.js); this only keeps a
// path component safe should one slip through.
function fileName (name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_')
}

async function readOrNull (file) {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
}

async function writeAtomic (file, text) {
  const temp = file + '.' + crypto.randomBytes(6).toString('hex') + '.tmp'
  try {
    await fs.writeFile(temp, text, { mode: KEY_MODE, flag: 'wx' })
    await fs.rename(temp, file)
  } catch (err) {
    await fs.rm(temp, { force: true })
    throw err
  }
}

/**
 * @param {string} pem a chain, leaf first
 * @returns {{notBefore: number, notAfter: number}|null} ms since the epoch, null when it does not parse
 */
function certificateDates (pem) {
  try {
    const leaf = new crypto.X509Certificate(pem)
    return { notBefore: Date.parse(leaf.validFrom), notAfter: Date.parse(leaf.validTo) }
  } catch {
    return null
  }
}

/**
 * @param {string} cert PEM chain, leaf first
 * @param {string} key PEM private key
 * @returns {boolean} whether the key is the leaf certificate's
 */
function pairMatches (cert, key) {
  try {
    return new crypto.X509Certificate(cert).checkPrivateKey(crypto.createPrivateKey(key))
  } catch {
    return false
  }
}

module.exports = { AcmeStorage, certificateDates, pairMatches, KEY_MODE, DIR_MODE }
