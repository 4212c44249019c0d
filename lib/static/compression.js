'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const zlib = require('node:zlib')
const mime = require('mime-types')
const db = require('mime-db')
const { parseRegexString } = require('../config/regex')
const { createEncodingNegotiator } = require('./negotiate')
const { createTtlMap } = require('./ttl-map')

// What the `compressible` package infers for types mime-db says nothing about.
const COMPRESSIBLE_TYPE = /^text\/|\+(?:json|text|xml)$/i
const MAX_KNOWN_EXTENSIONS = 512

// Speed over ratio for work done per request: Brotli's default
// quality 11 costs far more CPU than it saves bandwidth on the fly.
const BROTLI_OPTIONS = Object.freeze({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
const GZIP_OPTIONS = Object.freeze({ level: 6 })

/**
 * The two codings svr produces: the ETag suffix that tells their
 * representations apart and the name of a precompressed sidecar file.
 */
const CODINGS = Object.freeze({
  br: Object.freeze({ name: 'br', etagSuffix: '-br', extension: '.br', createEncoder: createBrotli, encode: encodeBrotli }),
  gzip: Object.freeze({ name: 'gzip', etagSuffix: '-gz', extension: '.gz', createEncoder: createGzip, encode: encodeGzip })
})

function createBrotli () {
  return zlib.createBrotliCompress(BROTLI_OPTIONS)
}

function createGzip () {
  return zlib.createGzip(GZIP_OPTIONS)
}

// The same bytes as the streams above, for a body held in memory; the work
// runs on libuv's thread pool, off the event loop.
function encodeBrotli (buffer) {
  return new Promise((resolve, reject) => {
    zlib.brotliCompress(buffer, BROTLI_OPTIONS, (err, coded) => err ? reject(err) : resolve(coded))
  })
}

function encodeGzip (buffer) {
  return new Promise((resolve, reject) => {
    zlib.gzip(buffer, GZIP_OPTIONS, (err, coded) => err ? reject(err) : resolve(coded))
  })
}

/**
 * Compression of static files (`enableCompression`, `compressionMinSize`,
 * `dontCompress`), set up once at boot.
 * @param {object} config
 * @param {((file: string) => Promise<boolean>) | null} mayFollow the symlink policy, applied to sidecars too
 * @returns {{
 *   negotiableType: (urlPath: string, file: string, size: number) => string|null,
 *   acceptableCodings: (req: import('node:http').IncomingMessage) => readonly string[],
 *   findSidecar: (file: string, stat: import('node:fs').Stats, codings: readonly string[]) =>
 *     Promise<{coding: object, path: string, stat: import('node:fs').Stats} | null>,
 *   sidecarsAbsent: (file: string, codings: readonly string[]) => boolean
 * } | null} null when compression is off
 */
function createCompression (config, mayFollow) {
  if (!config.enableCompression) return null
  const dontCompress = config.dontCompress.map(parseRegexString)
  const minSize = config.compressionMinSize
  const types = new Map()

  /**
   * Whether a file is sent in a coding the client chooses, so that the
   * response varies with Accept-Encoding.
   * @returns {string|null} the file's Content-Type when it is, else null
   */
  function negotiableType (urlPath, file, size) {
    if (size < minSize) return null
    const type = typeOf(types, path.extname(file))
    if (type === null) return null
    for (let i = 0; i < dontCompress.length; i++) {
      if (urlPath.search(dontCompress[i]) !== -1) return null
    }
    return type
  }

  const sidecars = createSidecarFinder(mayFollow)
  return {
    negotiableType,
    acceptableCodings: createEncodingNegotiator(),
    findSidecar: sidecars.find,
    sidecarsAbsent: sidecars.knownAbsent
  }
}

/**
 * @returns {string|null} the Content-Type for a compressible extension, null
 *   for any other (already-compressed formats such as .gz, .br, .png, .zip
 *   are not compressible in mime-db; unknown extensions are never compressed)
 */
function typeOf (types, extension) {
  let type = types.get(extension)
  if (type !== undefined) return type
  const mediaType = mime.lookup(extension)
  type = mediaType !== false && isCompressible(mediaType) ? mime.contentType(mediaType) : null
  if (types.size < MAX_KNOWN_EXTENSIONS) types.set(extension, type)
  return type
}

function isCompressible (mediaType) {
  const entry = db[mediaType]
  if (entry !== undefined && entry.compressible !== undefined) return entry.compressible
  return COMPRESSIBLE_TYPE.test(mediaType)
}

/**
 * Precompressed sidecars: `file.br` and `file.gz` beside `file`, used when
 * they are regular files not older than it. Absent ones are remembered for
 * a short while, so a site without sidecars pays no extra stat per request.
 * @param {((file: string) => Promise<boolean>) | null} mayFollow
 */
function createSidecarFinder (mayFollow, { ttl = 2000, maxEntries = 4096 } = {}) {
  const absent = createTtlMap({ ttl, maxEntries })

  // Without waiting: whether findSidecar is sure to find none, every
  // candidate having been found absent a moment ago. A coded body held in
  // memory stands in for the on-the-fly one only then, so that a client
  // gets the sidecar whatever other clients asked for before.
  function knownAbsent (file, codings) {
    for (let i = 0; i < codings.length; i++) {
      if (absent.get(file + CODINGS[codings[i]].extension) === undefined) return false
    }
    return true
  }

  async function find (file, fileStat, codings) {
    for (let i = 0; i < codings.length; i++) {
      const coding = CODINGS[codings[i]]
      const candidate = file + coding.extension
      if (absent.get(candidate) !== undefined) continue
      const stat = await statSidecar(candidate, absent)
      if (stat === null || stat.mtimeMs < fileStat.mtimeMs) continue
      if (mayFollow !== null && !(await mayFollow(candidate).catch(refuse))) continue
      return { coding, path: candidate, stat }
    }
    return null
  }

  return { find, knownAbsent }
}

async function statSidecar (candidate, absent) {
  try {
    const stat = await fs.stat(candidate)
    if (stat.isFile()) return stat
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') absent.set(candidate, true)
  }
  return null
}

function refuse () {
  return false
}

module.exports = { createCompression, CODINGS }
