'use strict'

const crypto = require('node:crypto')

/**
 * The password hashes of SVR.JS 3.x `users` records, so that a config.json
 * written by its svrpasswd keeps working: the hex `pass` is
 *   sha256:  SHA-256 of password + salt (one round; kept only for old records)
 *   pbkdf2:  PBKDF2-HMAC-SHA512 of password and salt, 36,250 iterations, 64 bytes
 *   scrypt:  scrypt of password and salt, N=2^14, r=8, p=1, 64 bytes
 * Passwords and salts are UTF-8. The slow ones run on libuv's thread pool,
 * never on the event loop.
 */

const ALGORITHMS = ['scrypt', 'pbkdf2', 'sha256']
const PBKDF2_ITERATIONS = 36250
const KEY_LENGTH = 64
// 128 * N * r = 16 MiB per call, within Node's default maxmem of 32 MiB.
const SCRYPT_OPTIONS = Object.freeze({ N: 16384, r: 8, p: 1 })
const SALT_LENGTH = 63
const SALT_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

/**
 * @param {{pbkdf2?: boolean, scrypt?: boolean}} record a `users` entry
 * @returns {'scrypt'|'pbkdf2'|'sha256'} scrypt wins when both flags are set, as in SVR.JS
 */
function algorithmOf (record) {
  if (record.scrypt === true) return 'scrypt'
  if (record.pbkdf2 === true) return 'pbkdf2'
  return 'sha256'
}

/**
 * @param {'scrypt'|'pbkdf2'|'sha256'} algorithm
 * @param {string} password
 * @param {string} salt
 * @returns {Promise<Buffer>} the derived key (32 bytes for sha256, else 64)
 */
function derive (algorithm, password, salt) {
  if (algorithm === 'sha256') {
    return Promise.resolve(crypto.createHash('sha256').update(password + salt).digest())
  }
  return new Promise((resolve, reject) => {
    function done (err, key) {
      if (err) reject(err)
      else resolve(key)
    }
    if (algorithm === 'scrypt') crypto.scrypt(password, salt, KEY_LENGTH, SCRYPT_OPTIONS, done)
    else crypto.pbkdf2(password, salt, PBKDF2_ITERATIONS, KEY_LENGTH, 'sha512', done)
  })
}

/**
 * @returns {string} 63 random letters and digits, as svrpasswd has always written
 */
function randomSalt () {
  let salt = ''
  for (let i = 0; i < SALT_LENGTH; i++) salt += SALT_ALPHABET[crypto.randomInt(SALT_ALPHABET.length)]
  return salt
}

/**
 * A new `users` record for a name and password.
 * @param {string} name
 * @param {string} password
 * @param {'scrypt'|'pbkdf2'|'sha256'} algorithm
 * @returns {Promise<{name: string, pass: string, salt: string, scrypt?: true, pbkdf2?: true, __svrpasswd_l2: true}>}
 */
async function createUserRecord (name, password, algorithm) {
  const salt = randomSalt()
  const key = await derive(algorithm, password, salt)
  const record = { name, pass: key.toString('hex'), salt }
  if (algorithm === 'scrypt') record.scrypt = true
  if (algorithm === 'pbkdf2') record.pbkdf2 = true
  // SVR.JS's svrpasswd reads this flag as "keep the algorithm on a password change".
  record.__svrpasswd_l2 = true
  return record
}

module.exports = { ALGORITHMS, algorithmOf, derive, randomSalt, createUserRecord }
