'use strict'

const path = require('node:path')

/**
 * @param {string} root absolute webroot
 * @param {string} decoded decoded, sanitized path starting with '/'
 * @param {boolean} [plain] whether it is plain (lib/paths/sanitize-path.js
 *   pathForm): known to have no dot segment and no empty one
 * @returns {string}
 */
function toFsPath (root, decoded, plain = false) {
  // What path.join would return, without its normalizing pass, for the
  // usual path: no dot segment, no empty segment, a root without a
  // trailing slash (path.resolve gives one, except for '/').
  if ((plain || (decoded.indexOf('/.') === -1 && decoded.indexOf('//') === -1)) && root.length > 1 &&
      root.charCodeAt(root.length - 1) !== 47 /* / */) {
    return root + decoded
  }
  return path.join(root, decoded)
}

// Plain paths whose file paths are kept, per worker: beyond this many the
// memo starts over, so that a scan of made-up paths costs its memory once.
const KEPT_PATHS = 2048
// A kept path may hold on to the request target it was cut from.
const MAX_KEPT_TARGET = 1024

/**
 * The file paths of plain request paths under one root, the same string
 * object for every request of a path. `root + decoded` makes a string of
 * two parts, which every cache it is a key of (the stats, the held bodies)
 * flattens and hashes anew, then compares with its kept key in a runtime
 * call: about 150 instruction-cache misses a request (callgrind, hello,
 * 404 and static 1 KiB alike). A kept object is its own key in those
 * caches, equal at once and with its hash already taken.
 */
class PlainFsPaths {
  /** @param {string} root absolute webroot */
  constructor (root) {
    this.root = root
    this.kept = new Map()
  }

  /**
   * @param {string} decoded a plain path (lib/paths/sanitize-path.js pathForm)
   * @param {number} targetLength of the request target it came from
   * @returns {string} as toFsPath(root, decoded, true)
   */
  of (decoded, targetLength) {
    let file = this.kept.get(decoded)
    if (file !== undefined) return file
    file = toFsPath(this.root, decoded, true)
    if (targetLength <= MAX_KEPT_TARGET) {
      if (this.kept.size >= KEPT_PATHS) this.kept.clear()
      this.kept.set(decoded, file)
    }
    return file
  }

  /** @returns {number} paths kept now */
  get size () {
    return this.kept.size
  }
}

module.exports = { toFsPath, PlainFsPaths, KEPT_PATHS, MAX_KEPT_TARGET }
