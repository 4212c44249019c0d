'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')

// What marks a sealed value in the store; anything else is stored as is.
const PREFIX = 'svr-sealed:v1:'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * The secrets svr puts in the fleet's store (the ACME account key, every
 * certificate's key, the TLS session ticket keys) are sealed with
 * AES-256-GCM under the key of `store.keyFile`, each value with a random IV
 * of its own, so that who reads the store (a backup, a replica, a shared
 * server's operator) does not get them. GCM's tag makes a value sealed under
 * another key, or altered, fail to open rather than give garbage; the name
 * a value is stored under is authenticated with it, so that a sealed value
 * moved to another name (one certificate's key to another name) fails too.
 * With a key, a value stored unsealed is refused: whoever can write to the
 * store could otherwise plant an account key or a ticket key of their own.
 */
class Sealer {
  /**
   * @param {Buffer|null} key 32 bytes; null = values are stored as they are
   */
  constructor (key) {
    this.key = key
  }

  /**
   * @param {string} text
   * @param {string} name what the value is stored under
   * @returns {string} what to store
   */
  seal (text, name) {
    if (this.key === null) return text
    const iv = crypto.randomBytes(IV_BYTES)
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(name, 'utf8'))
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
  }

  /**
   * @param {string} value as stored
   * @param {string} name what it is stored under
   * @returns {string} the text
   * @throws {Error} a sealed value without the key, one under another key
   *   or name, or an unsealed one while a key is set
   */
  open (value, name) {
    if (!isSealed(value)) {
      if (this.key === null) return value
      throw new Error('it is stored unencrypted while "store.keyFile" is set: not used, as whoever can write to the store could have put it there')
    }
    if (this.key === null) throw new Error('it is encrypted and "store.keyFile" is not set')
    const raw = Buffer.from(value.slice(PREFIX.length), 'base64')
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('it is too short to be an encrypted value')
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(name, 'utf8'))
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new Error('it does not open with the key of "store.keyFile" (encrypted under another key or for another name, or altered)')
    }
  }
}

/**
 * @param {string} value as stored
 * @returns {boolean} whether it is sealed (with whatever key)
 */
function isSealed (value) {
  return value.startsWith(PREFIX)
}

/**
 * The key of a key file: its first line, 32 bytes written as 64 hex digits
 * or as base64 (`openssl rand -hex 32`, `openssl rand -base64 32`).
 * @param {string|null} file
 * @returns {Promise<Buffer|null>} null without a file
 * @throws {Error} the file cannot be read or holds no such key
 */
async function readStoreKey (file) {
  if (file === null) return null
  const line = (await fs.readFile(file, 'utf8')).split(/\r?\n/)[0].trim()
  const key = /^[0-9a-fA-F]{64}$/.test(line) ? Buffer.from(line, 'hex') : Buffer.from(line, 'base64')
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(line) && key.toString('base64') !== line)) {
    throw new Error(file + ' does not hold a 32-byte key on its first line (64 hex digits or base64, as `openssl rand -hex 32` writes)')
  }
  return key
}

module.exports = { Sealer, readStoreKey, isSealed, PREFIX }
