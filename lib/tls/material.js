'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const tls = require('node:tls')
const { svrError, readFailure } = require('../errors')

/**
 * Read the PEM files the configuration names: `cert`/`key` and every `sni`
 * entry. The primary does this at start and on every reload and hands the
 * contents to its workers, so that workers never read the configuration
 * and a broken certificate refuses the reload while the running workers
 * keep serving with the old one.
 * @param {object} config the loaded configuration (absolute paths)
 * @param {string} ticketKeys from newTicketKeys, made once by the process that reads the material
 * @returns {Promise<{cert: string|null, key: string|null, sni: Object<string, {cert: string, key: string}>, ticketKeys: string}>}
 *   cert and key null when automatic HTTPS is on and neither file exists
 * @throws {SvrError} SVR_ERR_TLS_FILE naming the configuration key and the file
 */
async function readTlsMaterial (config, ticketKeys) {
  const main = await readDefaultPair(config)
  const sni = {}
  for (const name of Object.keys(config.sni)) {
    sni[name] = await readPair(config.sni[name], 'sni[' + JSON.stringify(name) + '].cert', 'sni[' + JSON.stringify(name) + '].key')
  }
  return { cert: main.cert, key: main.key, sni, ticketKeys }
}

/**
 * The keys every worker encrypts and decrypts session tickets with, so
 * that a ticket one worker issued resumes on any other (each TLS context
 * would otherwise draw keys of its own). Made once by the primary (or the
 * single process) and kept until it exits: reloads and worker replacements
 * keep sessions resumable, as nginx's master does with its random keys.
 * @returns {string} 48 random bytes, base64, to travel over IPC
 */
function newTicketKeys () {
  return crypto.randomBytes(48).toString('base64')
}

// With automatic HTTPS the default certificate is optional: without its
// files a handshake for a name that has no certificate yet fails
// (docs/https.md), and the server starts all the same.
async function readDefaultPair (config) {
  if (config.acme.enabled && !(await exists(config.cert)) && !(await exists(config.key))) return { cert: null, key: null }
  return readPair(config, 'cert', 'key')
}

function exists (file) {
  return fs.access(file).then(() => true, () => false)
}

async function readPair (entry, certLabel, keyLabel) {
  const cert = await readPem(certLabel, entry.cert)
  const key = await readPem(keyLabel, entry.key)
  // Parsing here turns a corrupt file or a key that does not belong to its
  // certificate into a start-up error, not into failing handshakes later.
  try {
    tls.createSecureContext({ cert, key })
  } catch (err) {
    throw svrError('SVR_ERR_TLS_FILE', [certLabel + '/' + keyLabel, entry.cert + ', ' + entry.key, tlsReason(err)], { cause: err })
  }
  return { cert, key }
}

async function readPem (label, file) {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    throw svrError('SVR_ERR_TLS_FILE', [label, file, readFailure(err)], { cause: err })
  }
}

// OpenSSL messages start with a long "error:0A00…:SSL routines:" prefix.
function tlsReason (err) {
  const reason = err.reason || err.message
  return reason.slice(reason.lastIndexOf(':') + 1).trim() || reason
}

module.exports = { readTlsMaterial, newTicketKeys }
