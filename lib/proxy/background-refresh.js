'use strict'

const { requestHeaders, responseHeaders } = require('./headers')
const { upstreamTarget } = require('./routes')
const { select, FULL } = require('./select')
const { decideStore } = require('../cache/policy')

/**
 * Fetch a stale entry again while the client that found it was answered
 * from it (stale-while-revalidate): a GET to an upstream of the route, with
 * the forwarding fields of that client's request, whose answer goes into
 * the cache when it may and nowhere else. A failure leaves the stale entry
 * as it is; the lock is released either way.
 * @param {object} req the client request that found the entry stale
 * @param {object} ctx its context
 * @param {object} route
 * @param {object} env the proxy's
 * @param {{base: string, key: string}} entry
 */
function refreshInBackground (req, ctx, route, env, entry) {
  const { cache, log, cacheSettings } = env
  const member = select(route, null, route.keyOf(ctx), Date.now())
  if (member === null || member === FULL) {
    cache.unfilled(entry.key)
    return
  }
  const { upstream } = member
  const headers = requestHeaders(req, ctx, route, upstream.address)
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
    const decision = decideStore({ method: 'GET', url: req.url, headers: req.headers }, { status: statusCode, headers: fields }, route.cache, Date.now())
    const chunks = []
    let size = 0
    for await (const chunk of body) {
      size += chunk.length
      if (decision.meta === null || size > cacheSettings.maxEntrySize) continue
      chunks.push(chunk)
    }
    if (decision.meta === null || size > cacheSettings.maxEntrySize) {
      cache.unfilled(entry.key)
      return
    }
    await cache.store(entry.base, req.headers, decision.meta, Buffer.concat(chunks, size))
  }).catch((err) => {
    log.warn('request ' + ctx.requestId + ': refreshing a stale cache entry from ' + upstream.name + ' failed: ' + err.message)
    cache.unfilled(entry.key)
  }).finally(() => upstream.release())
}

module.exports = { refreshInBackground }
