'use strict'

const fs = require('node:fs/promises')
const { createCompression, CODINGS } = require('../static/compression')
const { statusForFsError } = require('../static/fs-errors')
const { createBodyCache } = require('./bodies')
const { createIndexFinder } = require('./index-files')
const { Representation, refusal, isPlainRequest } = require('./representation')
const { createSidecarFinder } = require('./sidecars')
const { createStatCache } = require('./stats')
const { createSymlinkPolicy, rememberVerdicts } = require('./symlinks')

const INDEX_FILES = ['index.html', 'index.htm', 'index.xhtml']
const NO_CODINGS = Object.freeze([])
// Entries of the metadata caches: a few hundred bytes each, so that these
// bounds cost a few MiB per worker at most; bodies have fileCacheSize.
const MAX_PATHS = 4096
const MAX_DIRECTORIES = 1024

/**
 * The file store of a worker: what it knows of the webroot's files (stats,
 * index files, followSymlinks verdicts, precompressed sidecars, and the
 * bodies of small files), all under one freshness policy, `fileCacheTtl`:
 * nothing learnt from the disk is used longer than that without asking it
 * again. Bodies share one budget, `fileCacheSize`. It answers a request
 * for a file with a Representation, which lib/static/writer.js sends.
 * @param {object} config the validated config
 * @param {{clock?: {now: () => number}}} [options] for tests: a clock of their own
 */
function createFileStore (config, { clock } = {}) {
  const ttl = config.fileCacheTtl
  const stats = createStatCache({ ttl, maxEntries: MAX_PATHS, clock })
  const mayFollow = rememberVerdicts(createSymlinkPolicy(config.followSymlinks, config.wwwroot), { ttl, maxEntries: MAX_PATHS })
  const compression = createCompression(config)
  // Sidecars are judged on stats of their own, so a remembered verdict
  // holds only for the file it was given on.
  const sidecars = compression === null
    ? null
    : createSidecarFinder(mayFollow === null ? null : (file) => fs.stat(file).then((stat) => mayFollow(file, stat)), { ttl, maxEntries: MAX_PATHS })
  const findIndex = createIndexFinder(INDEX_FILES, { ttl, maxEntries: MAX_DIRECTORIES })
  const bodies = createBodyCache({ maxFileBytes: config.fileCacheMaxFileSize, maxBytes: config.fileCacheSize, ttl, clock })

  /**
   * @param {string} file absolute path
   * @param {import('node:fs').Stats} stat taken during the request
   * @returns {Promise<number>} 0 when the symlink policy lets the file be
   *   served, 403 when it refuses, or the status for the realpath error
   */
  async function linkRefusal (file, stat) {
    if (mayFollow === null) return 0
    try {
      return (await mayFollow(file, stat)) ? 0 : 403
    } catch (err) {
      return statusForFsError(err)
    }
  }

  // The compression verdict of a held file, kept with it for the URL path
  // it was last asked under (dontCompress matches paths, not files).
  function negotiableTypeOf (entry, urlPath, file) {
    if (entry.negotiatedPath !== urlPath) {
      entry.negotiatedType = compression.negotiableType(urlPath, file, entry.body.length)
      entry.negotiatedPath = urlPath
    }
    return entry.negotiatedType
  }

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
    const negotiable = compression === null ? null : negotiableTypeOf(entry, urlPath, file)
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
      let today = stat
      if (!fresh) {
        try {
          today = await stats.fresh(file)
        } catch (err) {
          return refusal(statusForFsError(err), err)
        }
        if (today === null || !today.isFile()) return refusal(404, null)
      }
      const status = await linkRefusal(file, today)
      if (status !== 0) return refusal(status, null)
      stat = today
    }
    if (codings.length !== 0) return resolveCoded(file, urlPath, stat, negotiable, codings, entry)
    if (plain && entry !== null) return fromMemory(file, urlPath, negotiable, null, entry, entry.body)
    if (plain && bodies.fits(stat)) {
      let loaded
      try {
        loaded = await bodies.load(file, stat)
      } catch (err) {
        return refusal(statusForFsError(err), err)
      }
      if (loaded !== null) return fromMemory(file, urlPath, negotiable, null, loaded, loaded.body)
    }
    const rep = new Representation(file, urlPath, stat)
    rep.negotiable = negotiable
    return rep
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

  /**
   * Whether a directory without an index file may be left to the listing:
   * judged on today's stats, as the listing reads it by its path.
   * @param {string} dir
   * @returns {Promise<Representation|null>} null when it may, else a refusal
   */
  async function judgeDirectory (dir) {
    let today
    try {
      today = await stats.fresh(dir)
    } catch (err) {
      return refusal(statusForFsError(err), err)
    }
    if (today === null || !today.isDirectory()) return refusal(404, null)
    const status = await linkRefusal(dir, today)
    return status === 0 ? null : refusal(status, null)
  }

  return {
    /** @type {(file: string) => Promise<import('node:fs').Stats|null>} may be up to fileCacheTtl old */
    stat: (file) => stats.lookup(file).promise,
    /** @type {(file: string) => import('node:fs').Stats|null|undefined} settled stats, without waiting */
    peekStat: stats.peek,
    /** @type {(file: string) => Promise<import('node:fs').Stats|null>} taken now */
    freshStat: stats.fresh,
    findIndex,
    held,
    resolve,
    judgeDirectory
  }
}

function fromMemory (file, urlPath, negotiable, coding, entry, body) {
  const rep = new Representation(file, urlPath, entry.stat)
  rep.negotiable = negotiable
  rep.coding = coding
  rep.body = body
  rep.held = coding === null ? entry : null
  return rep
}

module.exports = { createFileStore }
