'use strict'

const { connectionOf, socketAddresses, normalizeRequestHost } = require('../../hosts/vhost')
const { resolveClientAddress } = require('../../access/client-address')
const { newRequestId, acceptableRequestId, HEADER } = require('../../logging/request-id')
const { kContext, reportWhenOver } = require('./response-bytes')
const { knownName } = require('../../util/header-names')

const REQUEST_ID = knownName(HEADER)


/**
 * The one object of a request, made when it arrives (createContext) and
 * handed to every stage, to respond and, once the response is over, to the
 * access log and the metrics, which read their entry off it (the fields of
 * AccessEntry, lib/logging/format.js). Every field exists from the start so
 * that all contexts have one shape (V8 keeps such objects fast).
 */
class RequestContext {
  constructor (req, res, options, shared) {
    // Node's request and response, or svr's for an HTTP/2 request on the
    // bare stream until promote (lib/http2/promote.js) replaces them.
    this.req = req
    this.res = res
    this.options = options
    this.config = options.config
    this.shared = shared
    // When it arrived, for the log line; the monotonic clock's reading for
    // the duration is taken when it is wanted (reportWhenOver), else left -1.
    this.start = -1
    this.time = Date.now()
    this.method = req.method
    const url = typeof req.url === 'string' ? req.url : ''
    const query = url.indexOf('?')
    // The target as received (an HTTP/2 CONNECT has none).
    this.originalUrl = req.url
    this.protocol = protocolOf(req)
    // Raw, still percent-encoded path; the sanitize stage replaces it with the clean form.
    this.pathname = query === -1 ? url : url.slice(0, query)
    this.search = query === -1 ? '' : url.slice(query)
    this.origHref = this.pathname
    // The client as the access rules see it: the socket peer, or the
    // forwarded client when the peer is a trusted proxy.
    const connection = connectionOf(req)
    const addresses = socketAddresses(connection)
    this.clientAddress = addresses.remote
    this.fromTrustedProxy = false
    this.localAddress = addresses.local
    this.hostname = normalizeRequestHost(req, connection)
    // What the virtual-host entries say about this host and local address,
    // picked once here (lib/pipeline/site.js). A request without a target
    // (an HTTP/2 CONNECT) gets the entries for any host and address;
    // shared.sites is absent only in tests that make a context by hand.
    this.site = shared.sites === undefined
      ? null
      : typeof req.url === 'string' ? shared.sites.resolve(this.hostname, this.localAddress) : shared.sites.resolve('', '')
    // The `{path}` headers are set (lib/pipeline/request/custom-headers.js
    // sendPathHeaders); a request without a target has no path for them.
    this.pathHeadersSet = typeof req.url !== 'string'
    // Arrived over TLS (HTTPS or HTTP/2), not on the plain-HTTP server.
    this.secure = connection.encrypted === true
    // Taken through the stages (handleRequest), not answered before them
    // (413 on Content-Length, 417).
    this.inPipeline = false
    this.decodedPath = null
    // decodedPath when the sanitizer found it plain (lib/paths/sanitize-path.js
    // pathForm): no escape, empty segment or segment starting with `.`.
    // Stages compare it with decodedPath, which a rewrite may have replaced.
    this.plainPath = null
    this.fsPath = null
    // What the file store said of fsPath (lib/file-store/request-stats.js).
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
    // What a rate limit did to the request ('refused', 'delayed',
    // 'dry-run'), null when none did; for the access log.
    this.rateLimit = null
    // The request's way through the mods and the script, once it has taken
    // it (lib/application/run.js): the stages after it run in its request scope,
    // since they answer through methods that application code may have
    // wrapped, and a wrapper failing in a callback is then that request's
    // 500, not the worker's end.
    this.applicationScope = null
    // What the access log reports once the response is over
    // (lib/pipeline/request/response-bytes.js).
    this.status = 0
    this.bytes = 0
    this.socket = null
    this.sentBefore = -1
    this.sentAfter = -1
    this.referer = undefined
    this.userAgent = undefined
    this.duration = 0
    this.completed = false
    this.worker = 'single'
    this.log = null
    if (this.config.enableIPSpoofing) resolveClientAddress(this, req)
    // Sent as X-Request-Id at once, so every answer carries it; written to
    // the logs and shown on 5xx pages. Chosen after the client address:
    // a proxy's id is adopted only when the peer is a trusted one.
    this.requestId = this.fromTrustedProxy ? acceptableRequestId(req.headers['x-request-id']) || newRequestId() : newRequestId()
    res[kContext] = this
    // A request id needs no value check: svr's are UUIDs, and a proxy's
    // was adopted only if made of a few printable ASCII characters.
    REQUEST_ID.vouch(this.requestId)
    res.setHeader(HEADER, this.requestId)
    if (shared.accessLog !== undefined && shared.accessLog.wanted) reportWhenOver(this, shared.accessLog)
  }

  /**
   * Carry on with the request and response that replace this request's
   * (lib/http2/promote.js): the stages, respond and the access log follow.
   * @param {object} req
   * @param {object} res
   */
  moveTo (req, res) {
    this.req = req
    this.res = res
    res[kContext] = this
  }
}

// By the version's numbers: Node makes req.httpVersion a new string per
// request, and looking a new string up in an object hashes it first.
function protocolOf (req) {
  const major = req.httpVersionMajor
  const minor = req.httpVersionMinor
  if (major === 1) return minor === 1 ? 'HTTP/1.1' : minor === 0 ? 'HTTP/1.0' : 'HTTP/' + req.httpVersion
  return major === 2 && minor === 0 ? 'HTTP/2.0' : 'HTTP/' + req.httpVersion
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {object} options runtime options ({config, configFile, installDir, …})
 * @param {object} shared per-worker services (respond, log, sites, accessLog, …)
 * @returns {RequestContext}
 */
function createContext (req, res, options, shared) {
  return new RequestContext(req, res, options, shared)
}

/**
 * The context of a response, for code that is handed only the response
 * (the response classes, when application code calls them).
 * @param {object} res
 * @returns {RequestContext|null} null for a response svr made no context for
 */
function contextOfResponse (res) {
  const ctx = res[kContext]
  return ctx === undefined ? null : ctx
}

module.exports = { createContext, contextOfResponse, RequestContext }
