'use strict'

const { decideStore, exceedsEntrySize } = require('./policy')
const { serveEntry, STALE_IF_ERROR_STATUSES } = require('./answer')

// Fields of one exchange that a stored answer must not repeat to others.
const PER_REQUEST_FIELDS = ['x-request-id', 'cache-status', 'date']

/**
 * Keep what the application (mods, serverSideScript.js, or what answers
 * after them) writes to a response while it goes to the client, and store
 * it once whole when it may be stored. The response's writeHead, write and
 * end are wrapped on this one response, before any mod wraps them, so that
 * what is kept is what the client gets. A 5xx answered while a stale entry
 * may stand in is dropped, and the stale entry answers instead.
 */
class AnswerCapture {
  /**
   * @param {object} ctx the request's context
   * @param {object} env the stage's: cache, settings, respond, log, countCache
   * @param {import('./policy').CacheSettings} settings the matching rule's
   * @param {{base: string, key: string, filling: boolean, stale: object|null, previous: object|null}} state
   *   `filling`: this request fetches the entry for the whole server
   */
  constructor (ctx, env, settings, state) {
    this.ctx = ctx
    this.env = env
    this.settings = settings
    this.state = state
    // 'waiting' for the head, 'keeping' the body, 'passing' an answer not
    // to store, 'storing' a whole one, 'replaced' by the stale entry, 'done'.
    this.phase = 'waiting'
    this.meta = null
    this.chunks = []
    this.size = 0
    this.replacedStatus = 0
    // Http2ServerResponse#end hands its chunk to write(): kept once.
    this.inEnd = false
  }

  /**
   * Wrap the response's methods and follow its end.
   * @param {import('node:http').ServerResponse} res
   */
  attach (res) {
    const capture = this
    const original = { writeHead: res.writeHead, write: res.write, end: res.end }
    res.writeHead = function capturedWriteHead (status, ...rest) {
      if (capture.phase === 'waiting') {
        // The fields given here belong to the head being decided on.
        const last = rest[rest.length - 1]
        const fields = last !== null && typeof last === 'object' ? rest.pop() : null
        if (Array.isArray(fields)) capture.refuse()
        else if (fields !== null) for (const name of Object.keys(fields)) this.setHeader(name, fields[name])
        if (capture.begin(this, status)) return this
        return original.writeHead.call(this, status, ...rest, ...(Array.isArray(fields) ? [fields] : []))
      }
      if (capture.phase === 'replaced') return this
      return original.writeHead.apply(this, arguments)
    }
    res.write = function capturedWrite (chunk, encoding) {
      if (capture.phase === 'waiting' && capture.begin(this, this.statusCode)) return true
      if (capture.phase === 'replaced') return true
      if (!capture.inEnd) capture.keep(chunk, encoding)
      return original.write.apply(this, arguments)
    }
    res.end = function capturedEnd (chunk, encoding) {
      if (capture.phase === 'waiting') capture.begin(this, this.statusCode)
      if (capture.phase === 'replaced') {
        capture.answerStale(this, original)
        return this
      }
      if (typeof chunk !== 'function') capture.keep(chunk, encoding)
      capture.inEnd = true
      try {
        return original.end.apply(this, arguments)
      } finally {
        capture.inEnd = false
      }
    }
    res.on('finish', () => capture.finish())
    res.on('close', () => capture.abandon())
  }

  /**
   * The head is about to go out: decide whether the answer is kept, or
   * replaced by the stale entry.
   * @returns {boolean} whether the application's answer is dropped
   */
  begin (res, status) {
    const { stale, previous } = this.state
    if (STALE_IF_ERROR_STATUSES.has(status) && stale !== null && Date.now() < stale.meta.staleIfErrorUntil) {
      this.phase = 'replaced'
      this.replacedStatus = status
      return true
    }
    this.decide(res, status)
    const stored = this.phase === 'keeping'
    res.setHeader('Cache-Status', 'svr; fwd=' + (previous === null ? 'miss' : 'stale') + (stored ? '; stored' : ''))
    this.env.countCache(stored ? 'stored' : 'miss')
    return false
  }

  decide (res, status) {
    const headers = res.getHeaders()
    for (const name of PER_REQUEST_FIELDS) delete headers[name]
    const { req } = this.ctx
    const decision = this.state.filling && !exceedsEntrySize(headers, this.env.settings.maxEntrySize)
      ? decideStore({ method: 'GET', url: req.url, headers: req.headers }, { status, headers }, this.settings, Date.now())
      : { meta: null }
    this.meta = decision.meta
    if (this.meta === null) this.refuse()
    else this.phase = 'keeping'
  }

  // Nothing of this answer is stored.
  refuse () {
    this.phase = 'passing'
    this.meta = null
    this.chunks = []
    this.endFill()
  }

  keep (chunk, encoding) {
    if (this.phase !== 'keeping' || chunk === undefined || chunk === null) return
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk)
    this.size += buffer.length
    if (this.size > this.env.settings.maxEntrySize) this.refuse()
    else this.chunks.push(buffer)
  }

  // The application's error is dropped with the fields it set, and the
  // stale entry answers through the methods that were wrapped.
  answerStale (res, original) {
    this.phase = 'done'
    this.endFill()
    for (const name of res.getHeaderNames()) res.removeHeader(name)
    res.writeHead = original.writeHead
    res.write = original.write
    res.end = original.end
    const { state } = this
    serveEntry(this.ctx, this.env, state.key, state.stale, 'stale', 'fwd=stale; fwd-status=' + this.replacedStatus)
  }

  // The whole answer went out: it is stored, and the fill ends with that.
  finish () {
    if (this.phase !== 'keeping') return
    this.phase = 'storing'
    const { env, state } = this
    const body = Buffer.concat(this.chunks, this.size)
    this.chunks = []
    env.cache.store(state.base, this.ctx.req.headers, this.meta, body).then(
      () => { state.filling = false },
      (err) => {
        env.log.warn('response cache: cannot store an entry: ' + err.message)
        this.endFill()
      })
  }

  // The response is over ('close' follows 'finish' too): one cut short,
  // or that never began, stores nothing; nor does one whose error was to
  // give way to the stale entry and that never ended. Either way the fill
  // ends now, not at the lock's timeout.
  abandon () {
    if (this.phase === 'keeping' || this.phase === 'waiting' || this.phase === 'replaced') this.refuse()
  }

  // The fill is over without an entry: the requests waiting for it go on.
  endFill () {
    if (!this.state.filling) return
    this.state.filling = false
    this.env.cache.unfilled(this.state.key)
  }
}

module.exports = { AnswerCapture }
