'use strict'

const { LARGEST_SHARE } = require('./renewal')

// ACME Renewal Information (RFC 9773): a CA that offers it says when each
// certificate should be renewed, and moves the window to "now" when it
// revokes the certificate or must replace it early (a mass revocation). The
// CA says how long to wait before asking again (Retry-After); without it,
// or with an unusable one, svr asks every RECHECK_DEFAULT_MS.
const RECHECK_DEFAULT_MS = 6 * 60 * 60 * 1000
const RECHECK_MIN_MS = 60 * 1000
const RECHECK_MAX_MS = 24 * 60 * 60 * 1000

/**
 * The certificate's ARI identifier: base64url of its Authority Key
 * Identifier's keyIdentifier, a dot, and base64url of the bytes of its
 * serial number as DER encodes them.
 * @param {string} pem the certificate (the first of a chain)
 * @returns {string|null} null when it has no Authority Key Identifier
 */
function certificateId (pem) {
  // Required when first used (by the primary, with automatic HTTPS on): the
  // library takes about 60 ms to load, which a server without it never pays.
  const { X509Certificate, AuthorityKeyIdentifierExtension } = require('@peculiar/x509')
  const cert = new X509Certificate(pem)
  const aki = cert.getExtension(AuthorityKeyIdentifierExtension)
  if (aki === null || typeof aki.keyId !== 'string' || aki.keyId === '') return null
  return Buffer.from(aki.keyId, 'hex').toString('base64url') + '.' + serialBytes(cert.serialNumber).toString('base64url')
}

// The serial as DER encodes the INTEGER: no leading zero bytes but one
// when the first would have its high bit set (a serial is positive).
function serialBytes (hex) {
  let bytes = Buffer.from(hex.length % 2 === 1 ? '0' + hex : hex, 'hex')
  let first = 0
  while (first < bytes.length - 1 && bytes[first] === 0) first++
  bytes = bytes.subarray(first)
  return bytes[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes
}

/**
 * @param {*} body the CA's renewalInfo answer
 * @returns {{start: number, end: number}|null} the suggested window, ms
 *   since the epoch; null when the answer is not a valid one
 */
function suggestedWindow (body) {
  const window = body !== null && typeof body === 'object' ? body.suggestedWindow : null
  if (window === null || typeof window !== 'object') return null
  const start = Date.parse(window.start)
  const end = Date.parse(window.end)
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return null
  return { start, end }
}

/**
 * When to renew within the window: a point chosen at random in it, so that
 * the CA's clients spread out (now, when that point has passed). But not
 * before half the certificate's lifetime unless the whole window has
 * passed (how a CA asks for a revoked certificate to be replaced): a
 * window as wide as the lifetime (Pebble gives one to certificates shorter
 * than a few days) would otherwise renew a certificate just issued.
 * @param {{start: number, end: number}} window
 * @param {{notBefore: number, notAfter: number}} certificate
 * @param {number} now
 * @param {number} random in [0, 1)
 * @returns {number} ms since the epoch
 */
function renewalWithin (window, { notBefore, notAfter }, now, random) {
  const start = Math.min(Math.max(window.start, notBefore + (notAfter - notBefore) * LARGEST_SHARE), window.end)
  return Math.max(now, Math.floor(start + random * (window.end - start)))
}

/**
 * @param {*} retryAfter the Retry-After field of the answer
 * @param {number} now
 * @returns {number} ms to wait before asking the CA again
 */
function recheckDelay (retryAfter, now) {
  let ms = NaN
  // delay-seconds, or an HTTP-date (which ends in GMT).
  if (typeof retryAfter === 'string' && /^\d+$/.test(retryAfter.trim())) ms = Number(retryAfter.trim()) * 1000
  else if (typeof retryAfter === 'string' && /GMT$/.test(retryAfter.trim())) ms = Date.parse(retryAfter) - now
  if (!Number.isFinite(ms)) return RECHECK_DEFAULT_MS
  return Math.min(Math.max(ms, RECHECK_MIN_MS), RECHECK_MAX_MS)
}

/**
 * The CA's renewal windows of the manager's certificates: asked when a
 * name is checked and the last answer is due to be asked again, kept per
 * certificate (a new certificate is asked about afresh).
 */
class RenewalWindows {
  /**
   * @param {{renewalInfo: (pem: string, issuer: string) => Promise<{window: {start: number, end: number}, recheck: number}|null>}} client
   *   asks the CA that issued a certificate (lib/acme/issuer-chain.js)
   * @param {object} log
   */
  constructor (client, log) {
    this.client = client
    this.log = log
    // name -> {cert, at, recheckAt, failing}
    this.known = new Map()
  }

  /**
   * @param {string} name
   * @param {{cert: string, notBefore: number, notAfter: number, issuer: string}} certificate the one in use
   * @param {number} now
   * @returns {Promise<number>} when the CA wants it renewed (Infinity: no
   *   word from the CA); asks the CA when the last answer is old
   */
  async due (name, certificate, now) {
    const { cert } = certificate
    const known = this.known.get(name)
    if (known !== undefined && known.cert === cert && now < known.recheckAt) return known.at
    const entry = { cert, at: Infinity, recheckAt: now + RECHECK_MAX_MS, failing: false }
    try {
      const info = await this.client.renewalInfo(cert, certificate.issuer)
      if (info !== null) {
        entry.at = renewalWithin(info.window, certificate, now, Math.random())
        entry.recheckAt = now + info.recheck
        if (info.window.end <= now) {
          this.log.warn('acme: ' + name + ': the CA asks for this certificate to be replaced now (its renewal window ' +
            new Date(info.window.start).toISOString() + ' to ' + new Date(info.window.end).toISOString() + ' has passed, as for a revoked one)')
        }
      }
    } catch (err) {
      entry.recheckAt = now + RECHECK_DEFAULT_MS
      entry.failing = true
      if (known === undefined || !known.failing) {
        this.log.warn('acme: ' + name + ': cannot read the CA\'s renewal information (' + err.message + '); renewing by the certificate\'s dates')
      }
    }
    this.known.set(name, entry)
    return entry.at
  }

  /**
   * @param {string} name
   * @returns {number} when to ask the CA again (Infinity: not asked yet)
   */
  recheckAt (name) {
    const known = this.known.get(name)
    return known === undefined ? Infinity : known.recheckAt
  }

  /**
   * @param {string} name
   * @param {string} cert
   * @returns {number} the last answer for this certificate, without asking (Infinity: none)
   */
  cached (name, cert) {
    const known = this.known.get(name)
    return known !== undefined && known.cert === cert ? known.at : Infinity
  }
}

module.exports = { RenewalWindows, certificateId, suggestedWindow, renewalWithin, recheckDelay, RECHECK_DEFAULT_MS, RECHECK_MIN_MS, RECHECK_MAX_MS }
