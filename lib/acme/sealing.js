'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')

// What marks a sealed value in the store; anything else is plain PEM (a
// store filled before `storeKeyFile` was set).
const PREFIX = 'svr-sealed:v1:'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * The private keys that go to the fleet's store (the account key, every
 * certificate's key) are sealed with AES-256-GCM under the key of
 * `acme.storeKeyFile`, each value with a random IV of its own, so that who
 * reads the store (a backup, a replica, a shared server's operator) does
 * not get them. GCM's tag makes a value sealed under another key (or
 * altered) fail to open rather than give garbage.
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
   * @returns {string} what to store
   */
  seal (text) {
    if (this.key === null) return text
    const iv = crypto.randomBytes(IV_BYTES)
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv)
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
  }

  /**
   * @param {string} value as stored
   * @returns {string} the text
   * @throws {Error} a sealed value without the key, or under another key
   */
  open (value) {
    if (!value.startsWith(PREFIX)) return value
    if (this.key === null) throw new Error('it is sealed and "acme.storeKeyFile" is not set')
    const raw = Buffer.from(value.slice(PREFIX.length), 'base64')
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES))
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new Error('it does not open with the key of "acme.storeKeyFile" (sealed under another key, or altered)')
    }
  }
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

module.exports = { Sealer, readStoreKey, PREFIX }
