'use strict'

const { ProxyExchange, startExchange, forward } = require('./forward')
const { responseHeaders } = require('./headers')
const { decideStore, entryState } = require('../cache/policy')
const { refreshInBackground } = require('./background-refresh')

/**
 * Forward a request of a route with `cache` through the response cache:
 * a fresh entry is the answer; a missing or stale one is fetched by one
 * request for the whole server (the primary says which), the others
 * waiting for it; what the upstream answers is stored when RFC 9111 and
 * svr's rules allow (lib/cache/policy.js); a stale entry within its
 * stale-if-error window answers when the upstream fails.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {object} ctx
 * @param {object} route with `cache` (compiled settings)
 * @param {object} env the proxy's, with `cache` (lib/cache/worker-cache.js)
 * @returns {Promise<void>}
 */
async function forwardCached (req, res, ctx, route, env) {
  const { cache } = env
  // HEAD is answered from GET's entry; a HEAD that finds none fetches
  // nothing to store.
  const base = 'GET ' + ctx.hostname + ' ' + ctx.pathname + ctx.search
  let found = await findEntry(cache, base, req, env)
  const now = Date.now()
  const state = found.entry === null ? 'missing' : entryState(found.entry.meta, now)
  if (state === 'fresh') {
    serveEntry(req, res, ctx, env, found, 'hit', now)
    return
  }
  // Stale, but within stale-while-revalidate: answered at once, and one
  // request for the whole server fetches it again behind it.
  if (state === 'stale-while-revalidate') {
    serveEntry(req, res, ctx, env, found, 'hit; detail=stale', now)
    if (await cache.tryFill(found.key)) refreshInBackground(req, ctx, route, env, { base, key: found.key })
    return
  }
  if (req.method !== 'GET') {
    forward(req, res, ctx, route, env)
    return
  }
  const verdict = await cache.fill(found.key)
  if (verdict === 'filled') {
    const filled = await findEntry(cache, base, req, env)
    if (filled.entry !== null && entryState(filled.entry.meta, Date.now()) === 'fresh') {
      serveEntry(req, res, ctx, env, filled, 'hit', Date.now())
      return
    }
    found = filled
  }
  if (res.destroyed) {
    if (verdict === 'fill') cache.unfilled(found.key)
    return
  }
  const stale = found.entry !== null && entryState(found.entry.meta, Date.now()) !== 'expired' ? found : null
  startExchange(new CachingExchange(req, res, ctx, route, env, { base, key: found.key, filling: verdict === 'fill', stale }))
}

async function findEntry (cache, base, req, env) {
  try {
    return await cache.find(base, req.headers)
  } catch (err) {
    env.log.warn('response cache: cannot read an entry: ' + err.message)
    return { key: base, entry: null }
  }
}

/**
 * Answer from a stored entry, with its age and what the cache did (RFC 9211).
 * @param {string} how 'hit', or 'fwd=stale' for a stale one standing in for a failed upstream
 */
function serveEntry (req, res, ctx, env, found, how, now) {
  const { cache } = env
  const { meta, body } = found.entry
  env.countCache(how === 'hit' ? 'hit' : 'stale')
  res.statusCode = meta.status
  for (const name of Object.keys(meta.headers)) res.setHeader(name, meta.headers[name])
  res.setHeader('Age', String(Math.max(0, Math.floor((now - meta.storedAt) / 1000))))
  res.setHeader('Cache-Status', 'svr; ' + how)
  cache.hit(found.key)
  res.end(req.method === 'HEAD' ? undefined : body)
}

/**
 * A proxied request whose answer may go into the cache: its body is kept
 * (up to `maxEntrySize`) while it streams to the client, and stored once
 * whole; a failure is answered from a stale entry when there is one.
 */
class CachingExchange extends ProxyExchange {
  constructor (req, res, ctx, route, env, state) {
    super(req, res, ctx, route, env, false, true)
    this.state = state
    this.capture = null
  }

  onResponseStart (controller, statusCode, headers) {
    if (statusCode >= 200 && !this.done && this.state.filling) this.startCapture(statusCode, headers)
    super.onResponseStart(controller, statusCode, headers)
    if (statusCode < 200 || this.done) return
    this.env.countCache(this.capture === null ? 'miss' : 'stored')
    this.res.setHeader('Cache-Status', 'svr; fwd=' + (this.state.stale === null ? 'miss' : 'stale') + (this.capture === null ? '' : '; stored'))
  }

  startCapture (status, headers) {
    const { req, route } = this
    const fields = responseHeaders(headers, route)
    delete fields.via
    const decision = decideStore({ method: 'GET', url: req.url, headers: req.headers }, { status, headers: fields }, route.cache, Date.now())
    if (decision.meta === null) {
      this.endFill()
      return
    }
    this.capture = { meta: decision.meta, chunks: [], size: 0 }
  }

  onResponseData (controller, chunk) {
    const { capture } = this
    if (capture !== null && !this.done) {
      capture.size += chunk.length
      if (capture.size > this.env.cacheSettings.maxEntrySize) {
        this.capture = null
        this.endFill()
      } else {
        // undici may reuse the memory of a chunk once this returns.
        capture.chunks.push(Buffer.from(chunk))
      }
    }
    super.onResponseData(controller, chunk)
  }

  onResponseEnd (controller, trailers) {
    const { capture } = this
    const whole = !this.done
    super.onResponseEnd(controller, trailers)
    if (capture === null || !whole) return this.endFill()
    this.capture = null
    const { cache, log } = this.env
    cache.store(this.state.base, this.req.headers, capture.meta, Buffer.concat(capture.chunks, capture.size)).then(
      () => { this.state.filling = false },
      (err) => {
        log.warn('response cache: cannot store an entry: ' + err.message)
        this.endFill()
      })
  }

  onResponseError (controller, err) {
    this.capture = null
    super.onResponseError(controller, err)
    if (this.done) this.endFill()
  }

  refuseAnswer (controller, err, reason) {
    this.capture = null
    super.refuseAnswer(controller, err, reason)
    this.endFill()
  }

  // No upstream answered: a stale entry stands in, when it may.
  fail () {
    const { stale } = this.state
    if (stale !== null && entryState(stale.entry.meta, Date.now()) !== 'expired') {
      this.done = true
      this.endFill()
      serveEntry(this.req, this.res, this.ctx, this.env, stale, 'fwd=stale', Date.now())
      return
    }
    this.endFill()
    super.fail()
  }

  // The fill is over without an entry: the requests waiting for it go on.
  endFill () {
    if (!this.state.filling) return
    this.state.filling = false
    this.env.cache.unfilled(this.state.key)
  }
}

module.exports = { forwardCached }
