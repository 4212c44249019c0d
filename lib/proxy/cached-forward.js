'use strict'

const { ProxyExchange, startExchange, forward } = require('./forward')
const { responseHeaders } = require('./headers')
const { decideStore, exceedsEntrySize, entryState, asFillRequest, revalidatedMeta, baseKey } = require('../cache/policy')
const { serveEntry, invalidateAfter, STALE_IF_ERROR_STATUSES } = require('../cache/answer')
const { refreshInBackground } = require('./background-refresh')


/**
 * Forward a request of a route with `cache` through the response cache:
 * a fresh entry is the answer (lib/cache/answer.js: 304, ranges, HEAD); a
 * missing or stale one is fetched by one request for the whole server (the
 * primary says which), the others waiting for it; a stored one with a
 * validator is revalidated upstream (a 304 keeps its body); what the
 * upstream answers is stored when RFC 9111 and svr's rules allow
 * (lib/cache/policy.js); a stale entry within its stale-if-error window
 * answers when the upstream fails. A HEAD or a range that finds no fresh
 * entry goes upstream as it is and fills nothing; so do other methods, always.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {object} ctx
 * @param {object} route with `cache` (compiled settings)
 * @param {object} env the proxy's, with `cache` (lib/cache/worker-cache.js)
 * @returns {Promise<void>}
 */
function forwardCached (req, res, ctx, route, env) {
  // Only GET and HEAD have stored answers: a POST or a DELETE is the
  // application's to answer, every time.
  if (req.method === 'GET' || req.method === 'HEAD') return forwardReading(req, res, ctx, route, env)
  res.setHeader('Cache-Status', 'svr; fwd=method')
  invalidateAfter(req, res, env.cache, baseKey(ctx.hostname, ctx.pathname + ctx.search))
  forward(req, res, ctx, route, env)
  return Promise.resolve()
}

async function forwardReading (req, res, ctx, route, env) {
  const { cache } = env
  // HEAD is answered from GET's entry; a HEAD that finds none fetches
  // nothing to store.
  const base = baseKey(ctx.hostname, ctx.pathname + ctx.search)
  let found = await cache.lookup(base, req.headers)
  const now = Date.now()
  const state = found.entry === null ? 'missing' : entryState(found.entry.meta, now)
  if (state === 'fresh') {
    serveEntry(ctx, env, found.key, found.entry, 'hit', 'hit')
    return
  }
  // Stale, but within stale-while-revalidate: answered at once, and one
  // request for the whole server fetches it again behind it.
  if (state === 'stale-while-revalidate') {
    serveEntry(ctx, env, found.key, found.entry, 'stale', 'hit; detail=stale')
    if (await cache.tryFill(found.key)) refreshInBackground(req, ctx, route, env, { base, key: found.key, previous: found.entry })
    return
  }
  if (req.method !== 'GET' || req.headers.range !== undefined) {
    res.setHeader('Cache-Status', 'svr; fwd=request; detail=' + (req.method === 'GET' ? 'range' : 'head'))
    forward(req, res, ctx, route, env)
    return
  }
  const verdict = await cache.fill(found.key, found.at)
  if (verdict === 'filled') {
    const filled = await cache.lookup(base, req.headers)
    if (filled.entry !== null && entryState(filled.entry.meta, Date.now()) === 'fresh') {
      serveEntry(ctx, env, filled.key, filled.entry, 'hit', 'hit')
      return
    }
    found = filled
  }
  if (res.destroyed) {
    if (verdict === 'fill') cache.unfilled(found.key)
    return
  }
  const stale = found.entry !== null && entryState(found.entry.meta, Date.now()) !== 'expired' ? found.entry : null
  startExchange(new CachingExchange(req, res, ctx, route, env, { base, key: found.key, filling: verdict === 'fill', stale, previous: found.entry }))
}

/**
 * A proxied request whose answer may go into the cache: its body is kept
 * (up to `maxEntrySize`) while it streams to the client, and stored once
 * whole; a failure is answered from a stale entry when there is one.
 */
class CachingExchange extends ProxyExchange {
  /**
   * @param {{base: string, key: string, filling: boolean, stale: object|null, previous: object|null}} state
   *   `filling`: this request fetches the entry for the whole server;
   *   `previous`: the entry found (any age), revalidated by a fill when it
   *   has a validator; `stale`: the entry when it may stand in for a failure
   */
  constructor (req, res, ctx, route, env, state) {
    super(req, res, ctx, route, env, false, true)
    this.state = state
    this.capture = null
    // The 304's fields, when the upstream said the previous entry is current.
    this.notModified = null
    // The stale entry that answers instead of the upstream's 5xx, and that status.
    this.standIn = null
  }

  requestOptions (headers, upstream) {
    const options = super.requestOptions(headers, upstream)
    const { filling, previous } = this.state
    if (filling) asFillRequest(options.headers, previous === null ? null : previous.meta, this.req)
    return options
  }

  onResponseStart (controller, statusCode, headers) {
    if (this.done) return
    if (statusCode === 304 && this.state.filling && this.state.previous !== null) {
      this.notModified = responseHeaders(headers, this.route)
      return
    }
    if (STALE_IF_ERROR_STATUSES.has(statusCode) && this.usableStale() !== null) {
      this.standIn = { entry: this.usableStale(), status: statusCode }
      return
    }
    if (statusCode >= 200 && this.state.filling) this.startCapture(statusCode, headers)
    super.onResponseStart(controller, statusCode, headers)
    if (statusCode < 200 || this.done) return
    this.env.countCache(this.capture === null ? 'miss' : 'stored')
    this.res.setHeader('Cache-Status', 'svr; fwd=' + (this.state.previous === null ? 'miss' : 'stale') + (this.capture === null ? '' : '; stored'))
  }

  startCapture (status, headers) {
    const { req, route } = this
    const fields = responseHeaders(headers, route)
    delete fields.via
    const decision = exceedsEntrySize(fields, this.env.cacheSettings.maxEntrySize)
      ? { meta: null }
      : decideStore({ method: 'GET', url: req.url, headers: req.headers }, { status, headers: fields }, route.cache, Date.now())
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
    if (this.notModified === null && this.standIn === null) super.onResponseData(controller, chunk)
  }

  onResponseEnd (controller, trailers) {
    if (this.notModified !== null && !this.done) return this.revalidated()
    if (this.standIn !== null && !this.done) return this.answerStale()
    const { capture } = this
    const whole = !this.done
    super.onResponseEnd(controller, trailers)
    if (capture === null || !whole) return this.endFill()
    this.capture = null
    this.storeEntry(capture.meta, Buffer.concat(capture.chunks, capture.size))
  }

  // The upstream said the previous entry is current: it is stored again
  // with the 304's fields and a new lifetime, and answers the client.
  revalidated () {
    this.settle(null)
    const { previous } = this.state
    const revalidating = { method: 'GET', url: this.req.url, headers: this.req.headers }
    const meta = revalidatedMeta(previous.meta, revalidating, this.notModified, this.route.cache, Date.now())
    if (meta === null) {
      // A 304 for another answer than the one stored (RFC 9111 4.3.4): the
      // stored one is all there is to answer with, and it is not updated.
      this.endFill()
      serveEntry(this.ctx, this.env, this.state.key, previous, 'revalidated', 'fwd=stale; fwd-status=304; detail=mismatch')
      return
    }
    this.storeEntry(meta, previous.body)
    serveEntry(this.ctx, this.env, this.state.key, { meta, body: previous.body }, 'revalidated', 'fwd=stale; fwd-status=304; stored')
  }

  // The upstream answered with an error a stale entry may stand in for.
  answerStale () {
    this.settle(null)
    this.endFill()
    const { entry, status } = this.standIn
    serveEntry(this.ctx, this.env, this.state.key, entry, 'stale', 'fwd=stale; fwd-status=' + status)
  }

  // The stale entry found, while it may stand in for a failure.
  usableStale () {
    const { stale } = this.state
    return stale !== null && entryState(stale.meta, Date.now()) !== 'expired' ? stale : null
  }

  storeEntry (meta, body) {
    const { cache, log } = this.env
    cache.store(this.state.base, this.req.headers, meta, body).then(
      () => { this.state.filling = false },
      (err) => {
        log.warn('response cache: cannot store an entry: ' + err.message)
        this.endFill()
      })
  }

  onResponseError (controller, err) {
    this.capture = null
    this.notModified = null
    this.standIn = null
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
    const stale = this.usableStale()
    if (stale !== null) {
      this.done = true
      this.endFill()
      serveEntry(this.ctx, this.env, this.state.key, stale, 'stale', 'fwd=stale')
      return
    }
    this.endFill()
    super.fail()
  }

  abandon () {
    super.abandon()
    this.endFill()
  }

  // Waited for a connection too long: the requests waiting on this fill
  // are not held until the lock's timeout.
  expire () {
    this.endFill()
    super.expire()
  }

  // The fill is over without an entry: the requests waiting for it go on.
  endFill () {
    if (!this.state.filling) return
    this.state.filling = false
    this.env.cache.unfilled(this.state.key)
  }
}

module.exports = { forwardCached }
