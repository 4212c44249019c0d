'use strict'

const parseRange = require('range-parser')
const { checkPreconditions } = require('../static/conditional')

// What a 304 repeats of the answer it stands for (RFC 9110 15.4.5): the
// fields a cache or browser updates its own copy with.
const NOT_MODIFIED_FIELDS = ['cache-control', 'content-location', 'date', 'etag', 'expires', 'last-modified', 'vary']
const RANGE_OPTIONS = Object.freeze({ combine: true })
// Answers a stale entry may stand in for within its stale-if-error window (RFC 5861).
const STALE_IF_ERROR_STATUSES = new Set([500, 502, 503, 504])

/**
 * Answer a request from a stored entry, as a server with the whole answer
 * at hand would: its own preconditions (304, 412), one byte range (206, or
 * 416 past the end; several ranges get the whole body), HEAD without the
 * body. `Age` says how old the entry is and `Cache-Status` (RFC 9211) what
 * the cache did.
 * @param {import('../pipeline/request/context').RequestContext} ctx
 * @param {{meta: import('./policy').EntryMeta, body: Buffer}} entry
 * @param {string} cacheStatus the Cache-Status parameters, e.g. "hit"
 * @param {number} now ms
 * @param {{sendError: Function}} respond
 */
function answerFromEntry (ctx, entry, cacheStatus, now, respond) {
  const { req, res } = ctx
  const { meta, body } = entry
  const complete = meta.status === 200
  const verdict = complete ? checkPreconditions(req.headers, validatorOf(meta.headers.etag), lastModifiedOf(meta.headers)) : 0
  if (verdict === 412) {
    respond.sendError(ctx, 412)
    return
  }
  const range = complete && verdict === 0 && req.method === 'GET' ? rangeOf(req.headers, meta.headers, body.length) : null
  if (range === -1) {
    respond.sendError(ctx, 416, { headers: { 'Content-Range': 'bytes */' + body.length } })
    return
  }
  res.setHeader('Age', String(ageOf(meta, now)))
  res.setHeader('Cache-Status', 'svr; ' + cacheStatus)
  if (verdict === 304) {
    res.statusCode = 304
    for (const name of NOT_MODIFIED_FIELDS) {
      if (meta.headers[name] !== undefined) res.setHeader(name, meta.headers[name])
    }
    res.end()
    return
  }
  copyStoredFields(res, meta.headers)
  // Whatever the upstream said: the whole body is here to take ranges from.
  if (complete) res.setHeader('Accept-Ranges', 'bytes')
  let sent = body
  if (range === null) {
    res.statusCode = meta.status
  } else {
    res.statusCode = 206
    res.setHeader('Content-Range', 'bytes ' + range.start + '-' + range.end + '/' + body.length)
    sent = body.subarray(range.start, range.end + 1)
  }
  if (meta.status !== 204) res.setHeader('Content-Length', String(sent.length))
  res.end(req.method === 'HEAD' ? undefined : sent)
}

function copyStoredFields (res, headers) {
  for (const name of Object.keys(headers)) {
    // An entry stored before Age was kept apart still has the upstream's.
    if (name !== 'age') res.setHeader(name, headers[name])
  }
}

/**
 * The Age of a hit (RFC 9111 4.2.3): how old the answer was when stored,
 * plus how long it has been stored, in whole seconds.
 * @param {import('./policy').EntryMeta} meta
 * @param {number} now ms
 * @returns {number}
 */
function ageOf (meta, now) {
  return (meta.initialAge || 0) + Math.max(0, Math.floor((now - meta.storedAt) / 1000))
}

/**
 * The one range a GET asks for, when the answer may be a part of the body.
 * @param {object} headers the request's
 * @param {object} stored the entry's fields
 * @param {number} size
 * @returns {{start: number, end: number}|null|-1} null: the whole body; -1: nothing of it (416)
 */
function rangeOf (headers, stored, size) {
  const asked = headers.range
  if (typeof asked !== 'string' || !ifRangeHolds(headers['if-range'], stored)) return null
  const ranges = parseRange(size, asked, RANGE_OPTIONS)
  if (ranges === -1) return -1
  // A malformed field, another unit, or several ranges (no multipart
  // bodies here): the whole answer, which RFC 9110 14.2 allows.
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null
  return ranges[0]
}

// If-Range (RFC 9110 13.1.5): the range is for the stored answer only when
// the client names it by its strong tag, or by its exact Last-Modified.
function ifRangeHolds (ifRange, stored) {
  if (ifRange === undefined) return true
  const value = ifRange.trim()
  if (value.startsWith('"') || value.startsWith('W/')) return !value.startsWith('W/') && stored.etag === value
  return stored['last-modified'] !== undefined && Date.parse(value) === Date.parse(stored['last-modified'])
}

function validatorOf (etag) {
  return typeof etag === 'string' ? etag : null
}

// NaN when absent or unreadable: checkPreconditions' date comparisons
// are then all false.
function lastModifiedOf (headers) {
  const value = headers['last-modified']
  return typeof value === 'string' ? Date.parse(value) : NaN
}

/**
 * Answer from a stored entry, counted in the metrics and as a use of the
 * entry (for the byte budget's LRU).
 * @param {object} ctx the request's context
 * @param {{cache: object, respond: object, countCache: Function}} env a caching stage's
 * @param {string} key the entry's
 * @param {{meta: import('./policy').EntryMeta, body: Buffer}} entry
 * @param {'hit'|'stale'|'revalidated'} result for the metrics
 * @param {string} how the Cache-Status parameters
 */
function serveEntry (ctx, env, key, entry, result, how) {
  env.countCache(result)
  env.cache.hit(key)
  answerFromEntry(ctx, entry, how, Date.now(), env.respond)
}

// Methods that do not change what they name (RFC 9110 9.2.1): any other
// that succeeds makes what is stored of its URL outdated.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

/**
 * Drop the entries of a request's URL once an unsafe request to it (POST,
 * PUT, PATCH, DELETE, …) succeeded, as RFC 9111 asks of caches: the next
 * GET fetches what it changed. Nothing for a safe method or an error.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {{invalidate: (base: string) => void}} cache the worker's
 * @param {string} base the URL's base key
 */
function invalidateAfter (req, res, cache, base) {
  if (SAFE_METHODS.has(req.method)) return
  res.once('finish', () => {
    if (res.statusCode < 400) cache.invalidate(base)
  })
}

module.exports = { answerFromEntry, serveEntry, invalidateAfter, STALE_IF_ERROR_STATUSES }
