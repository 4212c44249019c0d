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
 * exist. Hashes are compared in constant time. A browser sends the same
 * credentials with every request, often several at once: requests with
 * credentials that are being checked wait for that check, and recent
 * successes are remembered (SuccessCache), so a page of images costs one
 * slow hash, and one throttled attempt.
 * @param {object[]} users the config's `users`
 * @param {{derive?: Function}} [deps] a stand-in key derivation (tests)
 * @returns {{knows: Function, verify: Function, keyOf: Function, dummy: object}}
 */
function createVerifier (users, { derive = hashes.derive } = {}) {
  const table = new Map()
  // The first record of a name is the one that counts.
  for (const user of users) if (!table.has(user.name)) table.set(user.name, compileRecord(user))
  const dummy = createDummy(users)
  const cache = new SuccessCache()
  const inflight = new Map()

  function recordFor (name, allowed) {
    const record = table.get(name)
    return record === undefined || (allowed !== null && !allowed.has(name)) ? dummy : record
  }

  /**
   * @param {string} name
   * @param {string} password
   * @param {Set<string>|null} allowed the rule's userList, null for every user
   * @returns {boolean} whether these credentials were accepted recently or
   *   are being checked right now: a request carrying them is no new guess
   */
  function knows (name, password, allowed) {
    if (recordFor(name, allowed) === dummy) return false
    const key = cache.key(name, password)
    return cache.has(key) || inflight.has(key)
  }

  /**
   * @param {string} name
   * @param {string} password
   * @param {Set<string>|null} allowed the rule's userList, null for every user
   * @returns {Promise<string|null>} the user name, or null when the credentials fail
   */
  async function verify (name, password, allowed) {
    const record = recordFor(name, allowed)
    if (record === dummy) {
      await derive(dummy.algorithm, password, dummy.salt)
      return null
    }
    const key = cache.key(name, password)
    if (cache.has(key)) return name
    let pending = inflight.get(key)
    if (pending === undefined) {
      pending = matches(derive, record, password).finally(() => inflight.delete(key))
      inflight.set(key, pending)
    }
    if (!await pending) return null
    cache.add(key)
    return name
  }

  /**
   * @param {string} name
   * @param {string} password
   * @returns {string} a key for these credentials that does not reveal them
   */
  function keyOf (name, password) {
    return cache.key(name, password)
  }

  return { knows, verify, keyOf, dummy }
}

async function matches (derive, record, password) {
  return sameKey(await derive(record.algorithm, password, record.salt), record.hash)
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
