'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tls = require('node:tls')
const { invalidConfig } = require('../errors')
const { AcmeStorage, KEY_MODE } = require('./storage')

/**
 * Refuse an `acme` configuration whose storage directory cannot be written
 * or whose CA bundle holds no certificate. Checked when starting, reloading
 * and with --check-config.
 * @param {string} file the configuration file, for the message
 * @param {object} config loaded
 * @returns {Promise<void>}
 * @throws {SvrError} SVR_ERR_CONFIG_INVALID naming /acme/storageDirectory or /acme/caBundle
 */
async function checkAcme (file, config) {
  const { acme } = config
  if (!acme.enabled) return
  const dir = acme.storageDirectory
  try {
    for (const issuer of acme.issuers) await new AcmeStorage(dir, issuer.key).prepare()
    // Only writing tells: access() says yes to root on a read-only mount.
    const probe = path.join(dir, '.write-test-' + crypto.randomBytes(6).toString('hex'))
    await fs.writeFile(probe, '', { mode: KEY_MODE, flag: 'wx' })
    await fs.rm(probe)
  } catch (err) {
    throw invalidConfig(file, ['/acme/storageDirectory: ' + dir + ' is not a writable directory (' + err.code + ')'])
  }
  for (const { eab, pointer } of acme.issuers) {
    if (eab !== null) await readEabKey(eab).catch((err) => { throw invalidConfig(file, [pointer + '/eab/hmacKeyFile: ' + err.message]) })
  }
  await checkDns(file, acme.dns)
  if (acme.caBundle === null) return
  try {
    // X509Certificate parses the first certificate of the file, and throws without one.
    const text = await fs.readFile(acme.caBundle, 'utf8')
    tls.createSecureContext({ ca: text })
    new crypto.X509Certificate(text)
  } catch (err) {
    throw invalidConfig(file, ['/acme/caBundle: ' + acme.caBundle + ' is not a readable PEM file of certificates (' + (err.code || err.message) + ')'])
  }
}

// The files acme.dns names: the TSIG key readable, the exec command
// runnable, and nsupdate on PATH for rfc2136.
async function checkDns (file, dns) {
  if (dns === null) return
  if (dns.provider === 'rfc2136' && await onPath('nsupdate') === null) {
    throw invalidConfig(file, ['/acme/dns/provider: "rfc2136" sends its updates with nsupdate, which is not on PATH (Debian: apt install bind9-dnsutils)'])
  }
  if (dns.tsigKeyFile !== null) {
    const text = await fs.readFile(dns.tsigKeyFile, 'utf8').catch((err) => {
      throw invalidConfig(file, ['/acme/dns/tsigKeyFile: ' + dns.tsigKeyFile + ' cannot be read (' + err.code + ')'])
    })
    if (!/\bkey\s+"?[^\s"{]+"?\s*\{[^}]*\bsecret\s+"[A-Za-z0-9+/=]+"\s*;/.test(text)) {
      throw invalidConfig(file, ['/acme/dns/tsigKeyFile: ' + dns.tsigKeyFile + ' holds no key in the format tsig-keygen writes (key "name" { algorithm hmac-sha256; secret "..."; };)'])
    }
  }
  if (dns.command !== null) {
    await fs.access(dns.command, fs.constants.X_OK).catch((err) => {
      throw invalidConfig(file, ['/acme/dns/command: ' + dns.command + ' is not a program svr can run (' + err.code + ')'])
    })
  }
}

// The path of a program on PATH, or null.
async function onPath (program) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir === '') continue
    const candidate = path.join(dir, program)
    if (await fs.access(candidate, fs.constants.X_OK).then(() => true, () => false)) return candidate
  }
  return null
}

// An HMAC key for EAB is at least 128 bits (CAs give 256).
const EAB_KEY_MIN_BYTES = 16

/**
 * @param {{hmacKeyFile: string}} eab the configuration's acme.eab
 * @returns {Promise<string>} the HMAC key, base64url, as the CA gave it
 * @throws {Error} saying what is wrong with the file
 */
async function readEabKey (eab) {
  let text
  try {
    text = (await fs.readFile(eab.hmacKeyFile, 'utf8')).trim()
  } catch (err) {
    throw new Error(eab.hmacKeyFile + ' cannot be read (' + err.code + ')')
  }
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text) || Buffer.from(text, 'base64url').length < EAB_KEY_MIN_BYTES) {
    throw new Error(eab.hmacKeyFile + ' does not hold the base64url HMAC key of at least ' + EAB_KEY_MIN_BYTES + ' bytes that the CA gave')
  }
  return text.replace(/=+$/, '')
}

module.exports = { checkAcme, readEabKey }
