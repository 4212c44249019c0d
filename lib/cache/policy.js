'use strict'

const CachePolicy = require('http-cache-semantics')

// A shared cache (RFC 9111 3): private answers and those to requests with
// credentials are not for everyone.
const POLICY_OPTIONS = Object.freeze({
  shared: true,
  // No heuristic freshness from Last-Modified: an answer without explicit
  // freshness lives as long as the configuration says for its status
  // (nginx's proxy_cache_valid), or not at all.
  cacheHeuristic: 0,
  // Immutable answers that say no lifetime are not kept for a day.
  immutableMinTimeToLive: 0
})

/**
 * The settings of one cache rule, compiled once.
 * @typedef {object} CacheSettings
 * @property {Map<number, number>} validity ms an answer with this status and
 *   no explicit freshness is fresh for (status 0: any status)
 * @property {number} staleWhileRevalidate ms a stale entry may still be served
 *   while one request refreshes it, beyond what the answer's own
 *   stale-while-revalidate says
 * @property {number} staleIfError ms a stale entry may still be served when
 *   the upstream fails, beyond the answer's own stale-if-error
 */

/**
 * @param {{validity?: Object<string, number>, staleWhileRevalidate?: number, staleIfError?: number}} rule
 *   validity: seconds by status ("200", "404", or "any")
 * @returns {CacheSettings}
 */
function compileCacheSettings (rule) {
  const validity = new Map()
  for (const [status, seconds] of Object.entries(rule.validity || {})) {
    validity.set(status === 'any' ? 0 : Number(status), seconds * 1000)
  }
  return {
    validity,
    staleWhileRevalidate: (rule.staleWhileRevalidate || 0) * 1000,
    staleIfError: (rule.staleIfError || 0) * 1000
  }
}

/**
 * What svr keeps of a stored answer besides its body: everything a worker
 * needs to serve it, refresh it or drop it, as plain data that can be
 * written to disk and sent between processes.
 * @typedef {object} EntryMeta
 * @property {number} status
 * @property {Object<string, string|string[]>} headers the answer's fields, hop-by-hop ones and Age already gone
 * @property {number} initialAge s, how old the answer was when stored (its Age, RFC 9111 4.2.3)
 * @property {string[]} vary the request fields the answer varies on, lower-cased, sorted
 * @property {number} storedAt ms
 * @property {number} freshUntil ms
 * @property {number} staleWhileRevalidateUntil ms
 * @property {number} staleIfErrorUntil ms
 * @property {object} policy http-cache-semantics' own state (toObject), for revalidation
 */

/**
 * Whether and for how long an answer may be stored, as a shared cache.
 * svr is stricter than RFC 9111 where a wrong hit leaks one user's answer to
 * another: an answer that sets a cookie is never stored, and one to a request
 * with credentials (Authorization, Cookie) only when it says `public` or
 * `s-maxage`.
 * @param {{method: string, url: string, headers: object}} req the request that was forwarded
 * @param {{status: number, headers: object}} res the upstream's (or application's) answer
 * @param {CacheSettings} settings
 * @param {number} now ms
 * @returns {{meta: EntryMeta, reason: null} | {meta: null, reason: string}}
 */
function decideStore (req, res, settings, now) {
  if (req.method !== 'GET') return refuse('method ' + req.method)
  // A part of the answer is not the answer.
  if (res.status === 206) return refuse('partial content')
  if (res.headers['set-cookie'] !== undefined) return refuse('sets a cookie')
  const cc = responseDirectives(res.headers['cache-control'])
  const publicAnswer = cc.has('public') || cc.has('s-maxage')
  if ((req.headers.authorization !== undefined || req.headers.cookie !== undefined) && !publicAnswer) {
    return refuse('request with credentials, answer not public')
  }
  const vary = varyFields(res.headers.vary)
  // Varies on what no key can hold (RFC 9110 12.5.5).
  if (vary.includes('*')) return refuse('not storable (Vary: *)')
  const policy = new CachePolicy(req, res, POLICY_OPTIONS)
  if (!policy.storable()) return refuse('not storable (' + describeRefusal(cc, res) + ')')
  const meta = metaOf(policy, res.status, res.headers, vary, settings, now)
  // An answer that is never fresh and has no validator is of no use to keep.
  if (meta.freshUntil === now && res.headers.etag === undefined && res.headers['last-modified'] === undefined) return refuse('no lifetime')
  return { meta, reason: null }
}

/**
 * @param {CachePolicy} policy
 * @param {number} status
 * @param {object} headers the answer's fields to store
 * @param {string[]} vary
 * @param {CacheSettings} settings
 * @param {number} now ms
 * @returns {EntryMeta}
 */
function metaOf (policy, status, headers, vary, settings, now) {
  const cc = responseDirectives(headers['cache-control'])
  // maxAge() less age() in whole seconds, as Age counts them: timeToLive()
  // would add the stale windows.
  let fresh = Math.max(0, (policy.maxAge() - Math.floor(policy.age())) * 1000)
  // no-cache: kept, but revalidated before every use.
  if (fresh === 0 && !hasExplicitFreshness(cc, headers) && !cc.has('no-cache')) fresh = validityOf(settings, status)
  const freshUntil = now + fresh
  // An answer that says it must be revalidated once stale is never served
  // stale, whatever the configuration allows (RFC 9111 4.2.4).
  const staleAllowed = !(cc.has('no-cache') || cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage'))
  return {
    status,
    headers: withoutAge(headers),
    // The Age a hit sends is this plus the time the entry has been stored.
    initialAge: Math.floor(policy.age()),
    vary,
    storedAt: now,
    freshUntil,
    staleWhileRevalidateUntil: staleAllowed ? freshUntil + Math.max(directiveMs(cc, 'stale-while-revalidate'), settings.staleWhileRevalidate) : freshUntil,
    staleIfErrorUntil: staleAllowed ? freshUntil + Math.max(directiveMs(cc, 'stale-if-error'), settings.staleIfError) : freshUntil,
    policy: policy.toObject()
  }
}

function withoutAge (headers) {
  if (headers.age === undefined) return headers
  const kept = { ...headers }
  delete kept.age
  return kept
}

// Fields of a 304 that never replace the stored answer's (RFC 9111 3.2):
// they describe the 304's own (absent) content.
const NOT_UPDATED = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'content-range'])

/**
 * A stored answer that the upstream said is still current (a 304 to the
 * cache's conditional request): its fields updated from the 304's, its
 * lifetime counted again from now.
 * @param {EntryMeta} meta the stored answer's
 * @param {{method: string, url: string, headers: object}} req the revalidating request
 * @param {object} headers the 304's fields, hop-by-hop ones already gone
 * @param {CacheSettings} settings
 * @param {number} now ms
 * @returns {EntryMeta|null} null when the 304 names another answer than the stored one
 */
function revalidatedMeta (meta, req, headers, settings, now) {
  const { policy, matches } = CachePolicy.fromObject(meta.policy).revalidatedPolicy(req, { status: 304, headers })
  if (!matches) return null
  const updated = { ...meta.headers }
  for (const name of Object.keys(headers)) {
    if (!NOT_UPDATED.has(name) && name !== 'via') updated[name] = headers[name]
  }
  return metaOf(policy, meta.status, updated, meta.vary, settings, now)
}

/**
 * @param {object} headers an answer's fields
 * @param {number} max `responseCache.maxEntrySize`
 * @returns {boolean} whether its Content-Length says its body is larger than an entry may be
 */
function exceedsEntrySize (headers, max) {
  const length = Number(headers['content-length'])
  return Number.isFinite(length) && length > max
}

function refuse (reason) {
  return { meta: null, reason }
}

/**
 * @param {string|string[]|undefined} value a Cache-Control field
 * @returns {Map<string, string|true>} directive -> its argument
 */
function responseDirectives (value) {
  const directives = new Map()
  if (value === undefined) return directives
  const text = Array.isArray(value) ? value.join(',') : value
  for (const part of text.split(',')) {
    const eq = part.indexOf('=')
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    if (name === '') continue
    directives.set(name, eq === -1 ? true : part.slice(eq + 1).trim().replace(/^"|"$/g, ''))
  }
  return directives
}

function hasExplicitFreshness (cc, headers) {
  return cc.has('max-age') || cc.has('s-maxage') || headers.expires !== undefined
}

function validityOf (settings, status) {
  return settings.validity.get(status) ?? settings.validity.get(0) ?? 0
}

function directiveMs (cc, name) {
  const value = Number(cc.get(name))
  return Number.isFinite(value) && value > 0 ? value * 1000 : 0
}

function describeRefusal (cc, res) {
  for (const name of ['no-store', 'private']) if (cc.has(name)) return name
  return 'status ' + res.status
}

/**
 * @param {string|string[]|undefined} value a Vary field
 * @returns {string[]} the request fields named, lower-cased, sorted, without duplicates
 */
function varyFields (value) {
  if (value === undefined) return []
  const text = Array.isArray(value) ? value.join(',') : value
  const names = new Set()
  for (const part of text.split(',')) {
    const name = part.trim().toLowerCase()
    if (name !== '') names.add(name)
  }
  return [...names].sort()
}

/**
 * The base key of a request: the GET answer of a host and target (path and
 * query, as the proxy routes see them), whatever the request's method.
 * Entries of answers with Vary add their variant (variantKey) after it.
 * @param {string} hostname lower-case, without port
 * @param {string} target path and query
 * @returns {string}
 */
function baseKey (hostname, target) {
  return 'GET ' + hostname + ' ' + target
}

/**
 * The part of a cache key that a Vary answer adds: the request's values of
 * the fields it varies on, so that answers for gzip and for identity, or for
 * two languages, are kept apart.
 * @param {string[]} vary from EntryMeta
 * @param {object} headers the request's
 * @returns {string}
 */
function variantKey (vary, headers) {
  if (vary.length === 0) return ''
  let key = ''
  for (const name of vary) {
    const value = headers[name]
    key += '\n' + name + ':' + (value === undefined ? '' : Array.isArray(value) ? value.join(',') : String(value).trim())
  }
  return key
}

/**
 * What a stored entry is good for now.
 * @param {EntryMeta} meta
 * @param {number} now
 * @returns {'fresh'|'stale-while-revalidate'|'stale-if-error'|'expired'}
 */
function entryState (meta, now) {
  if (now < meta.freshUntil) return 'fresh'
  if (now < meta.staleWhileRevalidateUntil) return 'stale-while-revalidate'
  if (now < meta.staleIfErrorUntil) return 'stale-if-error'
  return 'expired'
}

// The client's preconditions, which the cache answers itself from what it
// stores (lib/cache/answer.js): a fill carries the cache's own, or none.
const PRECONDITIONS = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since', 'if-range']

/**
 * Make the headers of a request forwarded upstream those of a fill: the
 * whole answer is asked for, conditional on the previous entry's
 * validators only (If-None-Match from its ETag, else If-Modified-Since
 * from its Last-Modified), so that a 304 means the stored body is current.
 * @param {object} headers the forwarded request's, changed in place
 * @param {EntryMeta|null} previous the entry found, of any age
 * @param {{url: string, headers: object}} req the client's request (the
 *   entry was stored for its URL and Host, which the forwarded one may lack)
 * @returns {object} headers
 */
function asFillRequest (headers, previous, req) {
  for (const name of PRECONDITIONS) delete headers[name]
  if (previous === null) return headers
  const own = { ...req.headers }
  for (const name of PRECONDITIONS) delete own[name]
  const validators = CachePolicy.fromObject(previous.policy).revalidationHeaders({ method: 'GET', url: req.url, headers: own })
  if (validators['if-none-match'] !== undefined) headers['if-none-match'] = validators['if-none-match']
  if (validators['if-modified-since'] !== undefined) headers['if-modified-since'] = validators['if-modified-since']
  return headers
}

module.exports = { compileCacheSettings, decideStore, exceedsEntrySize, revalidatedMeta, asFillRequest, baseKey, variantKey, entryState, varyFields }
