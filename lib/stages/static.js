'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const mime = require('mime-types')
const send = require('send')
const { createFileBodyCache } = require('../cache/file-body-cache')
const { statOnce, statFresh, knownStat } = require('../context')
const { compileCacheControl } = require('../static/cache-control')
const { sendCoded, sendCodedBody } = require('../static/coded-response')
const { createCompression, CODINGS } = require('../static/compression')
const { strongEtag } = require('../static/etag')
const { statusForFsError } = require('../static/fs-errors')
const { createIndexFinder } = require('../static/index-files')
const { createSymlinkPolicy, rememberVerdicts } = require('../static/symlinks')

const INDEX_FILES = ['index.html', 'index.htm', 'index.xhtml']
const NO_CODINGS = Object.freeze([])
// send hands its options to fs.createReadStream: big files go in fewer,
// larger reads and socket writes than the 64 KiB default.
const READ_CHUNK_BYTES = 256 * 1024
const VARIES_BY_ENCODING = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i
// Whether the stage set Cache-Control on the response a send stream writes.
const kCacheControl = Symbol('svr.static.cacheControl')

/**
 * Static files from the webroot, compressed when the client accepts it. The path is
 * stat'ed once (statOnce); a directory is served through its index file,
 * or left to the listing stage with ctx.stat still describing it. The
 * identity representation goes through `send` (strong ETag, Last-Modified,
 * conditional requests, ranges, HEAD); a representation in a content
 * coding is written by lib/static/coded-response.js.
 * @param {object} options runtime options
 * @param {{respond: object, log: object}} shared
 * @returns {(req, res, ctx) => Promise<boolean>}
 */
function createStaticStage (options, shared) {
  const { config } = options
  const { respond, log } = shared
  const cacheControlFor = compileCacheControl(config.cacheControl)
  const ttl = config.fileCacheTtl
  const mayFollow = rememberVerdicts(createSymlinkPolicy(config.followSymlinks, config.wwwroot), { ttl })
  // Sidecars are judged on stats of their own, so a remembered verdict
  // holds only for the file it was given on.
  const compression = createCompression(config, mayFollow === null ? null : (file) => fs.stat(file).then((stat) => mayFollow(file, stat)))
  const findIndex = createIndexFinder(INDEX_FILES, { ttl })
  // Files up to fileCacheMaxFileSize are held in memory, the one read
  // longest ago out first beyond fileCacheSize per worker: a held file
  // costs no read at all.
  const bodies = createFileBodyCache({ maxFileBytes: config.fileCacheMaxFileSize, maxBytes: config.fileCacheSize, ttl })
  const etags = config.enableETag
  // send's `public, max-age=0` and weak ETag stay off: the stage sets
  // Cache-Control from the rules and a strong ETag itself. Index files and
  // dotfiles are settled before send sees a path (see sendIdentity).
  const sendOptions = Object.freeze({ acceptRanges: true, cacheControl: false, etag: false, lastModified: true, highWaterMark: READ_CHUNK_BYTES })

  function fail (req, res, status, err, setCacheControl) {
    // A cacheable error page could outlive the file's repair by a year.
    if (setCacheControl) res.removeHeader('Cache-Control')
    if (status >= 500 && err !== null) log.error(req.method + ' ' + req.url + ' failed:', err)
    respond.sendError(req, res, status, {
      headers: err !== null ? err.headers : undefined,
      error: status >= 500 && err !== null ? err : undefined
    })
  }

  // `this` is the send stream: a listener shared by every request.
  function onSendError (err) {
    const status = typeof err.code === 'string' ? statusForFsError(err) : err.status || 500
    fail(this.req, this.res, status, err, this[kCacheControl])
  }

  function sendIdentity (req, res, urlPath, file, stat, setCacheControl) {
    const stream = send(req, urlPath, sendOptions)
    // send's public send(path, stat) transfers a file stat'ed already. It
    // writes to `res`, which pipe() would set before stat'ing it once more.
    stream.res = res
    stream[kCacheControl] = setCacheControl
    stream.on('error', onSendError)
    if (etags) stream.on('headers', setStrongEtag)
    stream.send(file, stat)
  }

  /**
   * @param {object} req
   * @param {object} res
   * @param {string} urlPath
   * @param {string} file
   * @param {import('node:fs').Stats} stat
   * @param {object|null} ctx the request's context when `stat` is its
   *   statOnce result, which may come from the stat cache; null when `stat`
   *   was taken during this request
   */
  async function serveFile (req, res, urlPath, file, stat, ctx) {
    const contentType = compression === null ? null : compression.negotiableType(urlPath, file, stat.size)
    // Ranges count bytes of the identity representation.
    const codings = contentType !== null && req.headers.range === undefined ? compression.acceptableCodings(req) : NO_CODINGS
    const plain = codings.length === 0 && isPlainRequest(req.headers)
    // A held body was read from a file the symlink policy accepted less
    // than a TTL ago, and still matches the request's stats.
    const held = (plain || codings.length !== 0) && bodies.fits(stat) ? bodies.peek(file, stat) : null
    if (held === null) {
      // Everything else opens the file by its path, so it is judged by
      // today's stats: cached ones may describe a file replaced since, by
      // a link out of the webroot, or by a directory.
      if (ctx !== null && ctx.statCached) {
        stat = await statFresh(ctx)
        if (stat === null || !stat.isFile()) {
          fail(req, res, statusForFsError(stat === null ? ctx.error : null), stat === null ? ctx.error : null, false)
          return
        }
      }
      const refusal = await linkRefusal(mayFollow, file, stat)
      if (refusal !== 0) {
        fail(req, res, refusal, null, false)
        return
      }
    }
    const cacheControl = startFile(res, urlPath, contentType)
    if (codings.length !== 0) {
      const sidecar = held !== null && held.variants[codings[0]] !== undefined && compression.sidecarsAbsent(file, codings)
        ? null
        : await compression.findSidecar(file, stat, codings)
      const coding = sidecar === null ? CODINGS[codings[0]] : sidecar.coding
      let status = sidecar === null && bodies.fits(stat) ? await sendCodedHeld(req, res, file, stat, coding, contentType, held) : -1
      if (status === -1) status = await sendCoded(req, res, { coding, file, stat, sidecar, contentType, etag: etags })
      if (status !== 0) fail(req, res, status, null, cacheControl !== null)
      return
    }
    if (held !== null && plain) {
      sendHeld(req, res, file, held)
      return
    }
    if (plain && bodies.fits(stat)) {
      let entry
      try {
        entry = await bodies.load(file, stat)
      } catch (err) {
        fail(req, res, statusForFsError(err), err, cacheControl !== null)
        return
      }
      if (entry !== null) {
        sendHeld(req, res, file, entry)
        return
      }
    }
    sendIdentity(req, res, urlPath, file, stat, cacheControl !== null)
  }

  // Headers of every answer with a file's contents. Returns the
  // Cache-Control value set, or null.
  function startFile (res, urlPath, contentType) {
    res.setHeader('X-Content-Type-Options', 'nosniff')
    const cacheControl = cacheControlFor === null ? null : cacheControlFor(urlPath)
    if (cacheControl !== null) res.setHeader('Cache-Control', cacheControl)
    if (contentType !== null) addVary(res)
    return cacheControl
  }

  // A coded body made from the held file and kept with it: -1 when the file
  // cannot be held (it is then streamed through an encoder).
  async function sendCodedHeld (req, res, file, stat, coding, contentType, held) {
    let entry = held
    let body
    try {
      if (entry === null) entry = await bodies.load(file, stat)
      if (entry === null) return -1
      body = entry.variants[coding.name] || await bodies.coded(file, entry, coding)
    } catch {
      // The streaming path opens the file again and reports its error.
      return -1
    }
    return sendCodedBody(req, res, { coding, stat: entry.stat, contentType, etag: etags }, body)
  }

  // The compression verdict of a held file, kept with it for the URL path
  // it was last asked under (dontCompress matches paths, not files).
  function negotiableTypeOf (held, urlPath, file) {
    if (held.negotiatedPath !== urlPath) {
      held.negotiatedType = compression.negotiableType(urlPath, file, held.body.length)
      held.negotiatedPath = urlPath
    }
    return held.negotiatedType
  }

  // The answer from memory, at once, when the request asks for the whole
  // file (no range, no precondition) and the representation it negotiates
  // is held: the identity body, or a coded one made earlier.
  function servedHeld (req, res, urlPath, file, stat) {
    if (!isPlainRequest(req.headers) || !bodies.fits(stat)) return false
    const held = bodies.peek(file, stat)
    if (held === null) return false
    const contentType = compression === null ? null : negotiableTypeOf(held, urlPath, file)
    const codings = contentType === null ? NO_CODINGS : compression.acceptableCodings(req)
    const coding = codings.length === 0 ? null : CODINGS[codings[0]]
    if (coding !== null && (held.variants[coding.name] === undefined || !compression.sidecarsAbsent(file, codings))) return false
    startFile(res, urlPath, contentType)
    if (coding === null) sendHeld(req, res, file, held)
    else sendCodedBody(req, res, { coding, stat: held.stat, contentType, etag: etags }, held.variants[coding.name])
    return true
  }

  // The whole 200 that send would write for a request without ranges or
  // preconditions, in the same header order, from memory.
  function sendHeld (req, res, file, entry) {
    if (entry.lastModified === null) {
      entry.etag = strongEtag(entry.stat, '')
      entry.lastModified = entry.stat.mtime.toUTCString()
      entry.type = mime.contentType(path.extname(file)) || 'application/octet-stream'
    }
    if (etags) res.setHeader('ETag', entry.etag)
    if (!res.getHeader('Accept-Ranges')) res.setHeader('Accept-Ranges', 'bytes')
    if (!res.getHeader('Last-Modified')) res.setHeader('Last-Modified', entry.lastModified)
    if (!res.getHeader('Content-Type')) res.setHeader('Content-Type', entry.type)
    res.setHeader('Content-Length', entry.body.length)
    if (req.method === 'HEAD') res.end()
    else res.end(entry.body)
  }

  function failMissing (req, res, ctx) {
    const err = ctx.error !== null && ctx.error.path === ctx.fsPath ? ctx.error : null
    fail(req, res, statusForFsError(err), err, false)
    return true
  }

  return function serveStatic (req, res, ctx) {
    if (ctx.fsPath === null || (req.method !== 'GET' && req.method !== 'HEAD')) return false
    // A hot path is answered without a promise: its stats, and for a small
    // file its body, are at hand.
    const stat = knownStat(ctx)
    if (stat === null) return failMissing(req, res, ctx)
    if (stat !== undefined && stat.isFile() && servedHeld(req, res, ctx.pathname, ctx.fsPath, stat)) return true
    return serveByStat(req, res, ctx)
  }

  async function serveByStat (req, res, ctx) {
    const stat = await statOnce(ctx)
    if (stat === null) return failMissing(req, res, ctx)
    let file = ctx.fsPath
    let fileStat = stat
    let urlPath = ctx.pathname
    if (stat.isDirectory()) {
      const index = await findIndex(file)
      if (index === null) {
        // Not this stage's to answer, unless the directory is out of bounds:
        // judged on today's stats, as the listing reads it by its path.
        const dirStat = ctx.statCached ? await statFresh(ctx) : stat
        if (dirStat === null || !dirStat.isDirectory()) {
          fail(req, res, statusForFsError(dirStat === null ? ctx.error : null), dirStat === null ? ctx.error : null, false)
          return true
        }
        const refusal = await linkRefusal(mayFollow, file, dirStat)
        if (refusal === 0) return false
        fail(req, res, refusal, null, false)
        return true
      }
      file = index.path
      fileStat = index.stat
      urlPath = joinUrlPath(urlPath, index.name)
    } else if (!stat.isFile()) {
      // FIFOs, sockets and devices: reading one could block or never end.
      fail(req, res, 501, null, false)
      return true
    }
    await serveFile(req, res, urlPath, file, fileStat, file === ctx.fsPath ? ctx : null)
    return true
  }
}

/**
 * @param {Function|null} mayFollow
 * @param {string} file
 * @param {import('node:fs').Stats} stat taken during the request
 * @returns {Promise<number>} 0 when the symlink policy lets the file be
 *   served, 403 when it refuses, or the status for the realpath error
 */
async function linkRefusal (mayFollow, file, stat) {
  if (mayFollow === null) return 0
  try {
    return (await mayFollow(file, stat)) ? 0 : 403
  } catch (err) {
    return statusForFsError(err)
  }
}

// A 'headers' listener of send: the strong tag replaces send's weak one,
// early enough for send's own conditional and If-Range checks to use it.
function setStrongEtag (res, file, stat) {
  res.setHeader('ETag', strongEtag(stat, ''))
}

/**
 * Whether send would answer the whole file with a plain 200: no range and
 * no precondition to evaluate.
 * @param {object} headers request headers
 * @returns {boolean}
 */
function isPlainRequest (headers) {
  return headers.range === undefined && headers['if-none-match'] === undefined &&
    headers['if-modified-since'] === undefined && headers['if-match'] === undefined &&
    headers['if-unmodified-since'] === undefined
}

/**
 * Add Accept-Encoding to Vary, keeping what customHeaders put there.
 * @param {import('node:http').ServerResponse} res
 */
function addVary (res) {
  const vary = res.getHeader('Vary')
  if (vary === undefined) {
    res.setHeader('Vary', 'Accept-Encoding')
  } else if (!VARIES_BY_ENCODING.test(String(vary))) {
    res.setHeader('Vary', vary + ', Accept-Encoding')
  }
}

function joinUrlPath (dir, name) {
  return dir.charCodeAt(dir.length - 1) === 47 /* / */ ? dir + name : dir + '/' + name
}

module.exports = { createStaticStage }
