'use strict'

/**
 * @param {string} text
 * @returns {number} 32-bit FNV-1a hash
 */
function hashString (text) {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * Mix two 32-bit hashes into one whose bits all depend on both (the
 * finalizer of MurmurHash3), so that a client's score for one upstream
 * says nothing of its score for another.
 * @param {number} a
 * @param {number} b
 * @returns {number} 32-bit unsigned
 */
function mixHashes (a, b) {
  let h = (a ^ Math.imul(b, 0x9e3779b1)) >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

module.exports = { hashString, mixHashes }
