'use strict'

const path = require('node:path')
const { socketAddresses, requestHostname, normalizeHostHeader } = require('../../hosts/vhost')
const { resolveClientAddress } = require('../../access/client-address')
const { attachContext } = require('../../logging/access-log')

const kContext = Symbol('svr.context')

/**
 * Per-request state shared by the stages. Every field exists from the start
 * so that all contexts have one shape (V8 keeps such objects fast).
 */
class RequestContext {
  constructor (req, options, shared) {
    const url = req.url
    const query = url.indexOf('?')
    this.options = options
    this.config = options.config
    this.shared = shared
    this.originalUrl = url
    // Raw, still percent-encoded path; the sanitize stage replaces it with the clean form.
    this.pathname = query === -1 ? url : url.slice(0, query)
    this.search = query === -1 ? '' : url.slice(query)
    this.origHref = this.pathname
    // The client as the access rules see it: the socket peer, or the
    // forwarded client when the peer is a trusted proxy.
    const addresses = socketAddresses(req.socket)
    this.clientAddress = addresses.remote
    this.fromTrustedProxy = false
    this.localAddress = addresses.local
    normalizeHostHeader(req)
    this.hostname = requestHostname(req)
    // What the virtual-host entries say about this host and local address,
    // picked once here (lib/pipeline/site.js); shared.sites is absent only in tests
    // that make a context by hand.
    this.site = shared.sites === undefined ? null : shared.sites.resolve(this.hostname, this.localAddress)
    // The `{path}` headers are set (lib/pipeline/request/custom-headers.js sendPathHeaders).
    this.pathHeadersSet = false
    // Arrived over TLS (HTTPS or HTTP/2), not on the plain-HTTP server.
    this.secure = req.socket.encrypted === true
    this.decodedPath = null
    this.fsPath = null
    this.stat = undefined
    this.statPath = null
    this.error = null
    // An absolute-form target, routed to the proxy pipeline.
    this.isProxy = false
    // The Basic-auth user name once a 401 rule has accepted the request.
    this.authUser = null
    // The proxy upstream that answered (or was tried last), and the time
    // from the first attempt to the end of its response, in ms; for the access log.
    this.upstream = null
    this.upstreamTime = -1
    // The request's way through the mods and the script, once it has taken
    // it (lib/application/run.js): the stages after it run in its request scope,
    // since they answer through methods that application code may have
    // wrapped, and a wrapper failing in a callback is then that request's
    // 500, not the worker's end.
    this.applicationScope = null
    if (this.config.enableIPSpoofing) resolveClientAddress(this, req)
    // Sent as X-Request-Id, written to the logs and shown on 5xx pages.
    // Stays last: a trusted proxy's id is adopted only when the fields
    // above have established that the peer is one.
    this.requestId = attachContext(req, this)
    req[kContext] = this
  }
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {object} options runtime options ({config, configFile, installDir, …})
 * @param {object} shared per-worker services (respond, log, …)
 * @returns {RequestContext}
 */
function createContext (req, options, shared) {
  return new RequestContext(req, options, shared)
}

/**
 * The context made for a request, for code that is handed only the request
 * (the responder).
 * @param {import('node:http').IncomingMessage} req
 * @returns {RequestContext|null} null before the pipeline made one
 */
function contextOf (req) {
  const ctx = req[kContext]
  return ctx === undefined ? null : ctx
}

/**
 * Give a context to the request that replaces the one it was made for
 * (lib/http2/promote.js), so that contextOf finds it there.
 * @param {object} req
 * @param {RequestContext} ctx
 */
function moveContext (req, ctx) {
  req[kContext] = ctx
}

/**
 * Stat the file the request maps to, once: a later call returns the cached
 * result unless a rewrite pointed the request at another path since. The
 * stats come from the worker's file store (lib/file-store), so they may be
 * up to fileCacheTtl old; stages that must see the disk as it is now ask
 * the store for fresh ones (statFresh).
 * @param {RequestContext} ctx with fsPath set
 * @returns {Promise<import('node:fs').Stats|null>} null when it does not exist
 */
async function statOnce (ctx) {
  const known = knownStat(ctx)
  if (known !== undefined) return known
  return remember(ctx, ctx.fsPath, ctx.shared.files.stat(ctx.fsPath))
}

async function remember (ctx, target, pending) {
  // An error belongs to the path it came from, not to a rewritten one.
  ctx.error = null
  let stats = null
  try {
    stats = await pending
  } catch (err) {
    ctx.error = err
  }
  return keep(ctx, target, stats)
}

function keep (ctx, target, stats) {
  ctx.stat = stats
  ctx.statPath = target
  return stats
}

/**
 * The stats statOnce would give, when they are at hand without waiting:
 * taken earlier in this request, or settled in the stat cache. Stages ask
 * it first, so that a hot path is judged without a promise.
 * @param {RequestContext} ctx with fsPath set
 * @returns {import('node:fs').Stats | null | undefined} undefined when only
 *   statOnce can tell
 */
function knownStat (ctx) {
  const target = ctx.fsPath
  if (ctx.stat !== undefined && ctx.statPath === target) return ctx.stat
  const stats = ctx.shared.files.peekStat(target)
  if (stats === undefined) return undefined
  ctx.error = null
  return keep(ctx, target, stats)
}

/**
 * statOnce, but taken now: for answers that must show the disk as it is
 * (a listing after a file was added, a permanent redirect). The store
 * keeps them for the next requests.
 * @param {RequestContext} ctx with fsPath set
 * @returns {Promise<import('node:fs').Stats|null>}
 */
function statFresh (ctx) {
  return remember(ctx, ctx.fsPath, ctx.shared.files.freshStat(ctx.fsPath))
}

/**
 * @param {string} root absolute webroot
 * @param {string} decoded decoded, sanitized path starting with '/'
 * @returns {string}
 */
function toFsPath (root, decoded) {
  // What path.join would return, without its normalizing pass, for the
  // usual path: no dot segment, no empty segment, a root without a
  // trailing slash (path.resolve gives one, except for '/').
  if (decoded.indexOf('/.') === -1 && decoded.indexOf('//') === -1 && root.length > 1 &&
      root.charCodeAt(root.length - 1) !== 47 /* / */) {
    return root + decoded
  }
  return path.join(root, decoded)
}

module.exports = { createContext, contextOf, moveContext, statOnce, knownStat, statFresh, toFsPath, RequestContext }
