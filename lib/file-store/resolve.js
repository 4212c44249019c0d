'use strict'

const { CODINGS } = require('../static/compression')
const { statusForFsError } = require('../static/fs-errors')
const { Representation, refusal, isPlainRequest } = require('./representation')

const NO_CODINGS = Object.freeze([])

/**
 * How the file store answers a request for a file: from what it holds at
 * once (held), or after asking the disk what it must (resolve).
 * @param {{judge: object, bodies: object, compression: object|null, sidecars: object|null}} parts
 *   the store's parts (lib/file-store/index.js)
 */
function createResolver ({ judge, bodies, compression, sidecars }) {
  /**
   * The representation at once, without a promise, when the request asks
   * for the whole file (no range, no precondition) and what it negotiates
   * is held in memory: the identity body, or a coded one made earlier.
   * @param {import('node:http').IncomingMessage} req
   * @param {string} urlPath
   * @param {string} file
   * @param {import('node:fs').Stats} stat the request's stats, which may be
   *   up to fileCacheTtl old
   * @returns {Representation|null} null when only resolve can tell
   */
  function held (req, urlPath, file, stat) {
    if (!isPlainRequest(req.headers) || !bodies.fits(stat)) return null
    const entry = bodies.peek(file, stat)
    if (entry === null) return null
    const negotiable = compression === null ? null : negotiableTypeOf(compression, entry, urlPath, file)
    const codings = negotiable === null ? NO_CODINGS : compression.acceptableCodings(req)
    if (codings.length === 0) return fromMemory(file, urlPath, negotiable, null, entry, entry.body)
    const coded = entry.variants[codings[0]]
    if (coded === undefined || !sidecars.knownAbsent(file, codings)) return null
    return fromMemory(file, urlPath, negotiable, CODINGS[codings[0]], entry, coded)
  }

  /**
   * The representation of a regular file for a GET or HEAD: identity or
   * coded, held in memory or to be read, or a refusal. Anything read by its
   * path is judged by today's stats and the symlink policy first.
   * @param {import('node:http').IncomingMessage} req
   * @param {string} urlPath
   * @param {string} file
   * @param {import('node:fs').Stats} stat
   * @param {boolean} fresh whether `stat` was taken during this request
   *   (false: it may be up to fileCacheTtl old)
   * @returns {Promise<Representation>}
   */
  async function resolve (req, urlPath, file, stat, fresh) {
    const negotiable = compression === null ? null : compression.negotiableType(urlPath, file, stat.size)
    // Ranges count bytes of the identity representation.
    const codings = negotiable !== null && req.headers.range === undefined ? compression.acceptableCodings(req) : NO_CODINGS
    const plain = codings.length === 0 && isPlainRequest(req.headers)
    // A held body was read from a file the symlink policy accepted less
    // than a TTL ago, and still matches the request's stats.
    const entry = (plain || codings.length !== 0) && bodies.fits(stat) ? bodies.peek(file, stat) : null
    if (entry === null) {
      const today = await judge.file(file, fresh ? stat : null)
      if (today instanceof Representation) return today
      stat = today
    }
    if (codings.length !== 0) return resolveCoded(file, urlPath, stat, negotiable, codings, entry)
    if (!plain) return fromDisk(file, urlPath, stat, negotiable)
    if (entry !== null) return fromMemory(file, urlPath, negotiable, null, entry, entry.body)
    return resolveIdentity(file, urlPath, stat, negotiable)
  }

  // The whole file, from memory once read if it can be held.
  async function resolveIdentity (file, urlPath, stat, negotiable) {
    if (bodies.fits(stat)) {
      let loaded
      try {
        loaded = await bodies.load(file, stat)
      } catch (err) {
        return refusal(statusForFsError(err), err)
      }
      if (loaded !== null) return fromMemory(file, urlPath, negotiable, null, loaded, loaded.body)
    }
    return fromDisk(file, urlPath, stat, negotiable)
  }

  // A sidecar, a coded body made from the held file and kept with it, or
  // the file through an encoder (when it cannot be held).
  async function resolveCoded (file, urlPath, stat, negotiable, codings, entry) {
    const sidecar = entry !== null && entry.variants[codings[0]] !== undefined && sidecars.knownAbsent(file, codings)
      ? null
      : await sidecars.find(file, stat, codings)
    const rep = new Representation(file, urlPath, stat)
    rep.negotiable = negotiable
    rep.coding = sidecar === null ? CODINGS[codings[0]] : sidecar.coding
    rep.sidecar = sidecar
    if (sidecar !== null || !bodies.fits(stat)) return rep
    try {
      const source = entry === null ? await bodies.load(file, stat) : entry
      if (source === null) return rep
      rep.body = source.variants[rep.coding.name] || await bodies.coded(file, source, rep.coding)
      rep.stat = source.stat
    } catch {
      // The stream opens the file again and reports its error.
      rep.body = null
    }
    return rep
  }

  return { held, resolve }
}

// The compression verdict of a held file, kept with it for the URL path
// it was last asked under (dontCompress matches paths, not files).
function negotiableTypeOf (compression, entry, urlPath, file) {
  if (entry.negotiatedPath !== urlPath) {
    entry.negotiatedType = compression.negotiableType(urlPath, file, entry.body.length)
    entry.negotiatedPath = urlPath
  }
  return entry.negotiatedType
}

function fromDisk (file, urlPath, stat, negotiable) {
  const rep = new Representation(file, urlPath, stat)
  rep.negotiable = negotiable
  return rep
}

function fromMemory (file, urlPath, negotiable, coding, entry, body) {
  const rep = new Representation(file, urlPath, entry.stat)
  rep.negotiable = negotiable
  rep.coding = coding
  rep.body = body
  rep.held = coding === null ? entry : null
  return rep
}

module.exports = { createResolver }
