'use strict'

const crypto = require('node:crypto')
const hashes = require('./hash')
const { SuccessCache } = require('./success-cache')

// Among equally common algorithms the dummy takes the slowest, so that an
// unknown name never answers faster than some real one.
const SLOWEST_FIRST = ['scrypt', 'pbkdf2', 'sha256']
const KEY_BYTES = { scrypt: 64, pbkdf2: 64, sha256: 32 }

/**
 * Check Basic-auth passwords against the `users` records, compiled once per
 * worker. A name that is unknown, or not in the rule's `userList`, is
 * checked against a dummy record of the most common algorithm, so that the
 * answer takes as long as for a real user and does not reveal which names
 * exist. Hashes are compared in constant time.
 * @param {object[]} users the config's `users`
 * @param {{derive?: Function}} [deps] a stand-in key derivation (tests)
 * @returns {{has: (name: string) => boolean, verify: Function, dummy: object}}
 */
function createVerifier (users, { derive = hashes.derive } = {}) {
  const table = new Map()
  // The first record of a name is the one that counts.
  for (const user of users) if (!table.has(user.name)) table.set(user.name, compileRecord(user))
  const dummy = createDummy(users)
  const cache = new SuccessCache()

  /**
   * @param {string} name
   * @param {string} password
   * @param {Set<string>|null} allowed the rule's userList, null for every user
   * @returns {Promise<string|null>} the user name, or null when the credentials fail
   */
  async function verify (name, password, allowed) {
    let record = table.get(name)
    if (record === undefined || (allowed !== null && !allowed.has(name))) record = dummy
    const key = record === dummy ? null : cache.key(name, password)
    if (key !== null && cache.has(key)) return name
    const derived = await derive(record.algorithm, password, record.salt)
    if (!sameKey(derived, record.hash) || record === dummy) return null
    cache.add(key)
    return name
  }

  return { has: (name) => table.has(name), verify, dummy }
}

function compileRecord (user) {
  return { name: user.name, algorithm: hashes.algorithmOf(user), salt: user.salt, hash: Buffer.from(user.pass, 'hex') }
}

function createDummy (users) {
  const counts = { scrypt: 0, pbkdf2: 0, sha256: 0 }
  for (const user of users) counts[hashes.algorithmOf(user)]++
  let algorithm = SLOWEST_FIRST[0]
  for (const candidate of SLOWEST_FIRST) if (counts[candidate] > counts[algorithm]) algorithm = candidate
  return { name: null, algorithm, salt: hashes.randomSalt(), hash: crypto.randomBytes(KEY_BYTES[algorithm]) }
}

// A record whose hex has the wrong length never matches; timingSafeEqual
// itself refuses buffers of different lengths.
function sameKey (derived, stored) {
  return derived.length === stored.length && crypto.timingSafeEqual(derived, stored)
}

module.exports = { createVerifier }
