'use strict'

const path = require('node:path')
const zlib = require('node:zlib')
const mime = require('mime-types')
const db = require('mime-db')
const { parseMatchTester } = require('../util/regex')
const { createEncodingNegotiator } = require('./negotiate')

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
 * @returns {{
 *   negotiableType: (urlPath: string, file: string, size: number) => string|null,
 *   acceptableCodings: (req: import('node:http').IncomingMessage) => readonly string[]
 * } | null} null when compression is off
 */
function createCompression (config) {
  if (!config.enableCompression) return null
  const dontCompress = config.dontCompress.map(parseMatchTester)
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

  return { negotiableType, acceptableCodings: createEncodingNegotiator() }
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

module.exports = { createCompression, CODINGS }
