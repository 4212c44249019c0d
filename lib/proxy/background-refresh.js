'use strict'

const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget } = require('./routes')
const { select, FULL } = require('./select')
const { decideStore, asFillRequest, revalidatedMeta } = require('../cache/policy')

/**
 * Fetch a stale entry again while the client that found it was answered
 * from it (stale-while-revalidate): a GET to an upstream of the route, with
 * the forwarding fields of that client's request, conditional on the
 * entry's validators, whose answer goes into the cache when it may and
 * nowhere else (a 304 stores the entry again with a new lifetime). A
 * failure leaves the stale entry as it is; the lock is released either way.
 * @param {object} req the client request that found the entry stale
 * @param {object} ctx its context
 * @param {object} route
 * @param {object} env the proxy's
 * @param {{base: string, key: string, previous: {meta: object, body: Buffer}}} entry
 */
function refreshInBackground (req, ctx, route, env, entry) {
  const { cache, log, cacheSettings } = env
  const member = select(route, null, route.keyOf(ctx), Date.now())
  if (member === null || member === FULL) {
    cache.unfilled(entry.key)
    return
  }
  const { upstream } = member
  const headers = asFillRequest(requestHeaders(req, ctx, route, upstream.address), entry.previous.meta, req)
  upstream.inFlight++
  upstream.dispatcher().request({
    path: upstreamTarget(route, ctx),
    method: 'GET',
    headers,
    headersTimeout: route.firstByteTimeout,
    bodyTimeout: route.idleTimeout,
    servername: upstream.servername
  }).then(async ({ statusCode, headers: answered, body }) => {
    const fields = responseHeaders(answered, route)
    delete fields.via
    const forwarded = { method: 'GET', url: req.url, headers: req.headers }
    const now = Date.now()
    const meta = statusCode === 304
      ? revalidatedMeta(entry.previous.meta, forwarded, fields, route.cache, now)
      : decideStore(forwarded, { status: statusCode, headers: fields }, route.cache, now).meta
    const chunks = []
    let size = 0
    for await (const chunk of body) {
      size += chunk.length
      if (meta === null || size > cacheSettings.maxEntrySize) continue
      chunks.push(chunk)
    }
    if (meta === null || size > cacheSettings.maxEntrySize) {
      cache.unfilled(entry.key)
      return
    }
    await cache.store(entry.base, req.headers, meta, statusCode === 304 ? entry.previous.body : Buffer.concat(chunks, size))
  }).catch((err) => {
    log.warn('request ' + ctx.requestId + ': refreshing a stale cache entry from ' + upstream.name + ' failed: ' + err.message)
    cache.unfilled(entry.key)
  }).finally(() => upstream.release())
}

module.exports = { refreshInBackground }
