'use strict'

const { createContext } = require('./request/context')
const { createFileStore } = require('../file-store')
const { createResponder } = require('./request/respond')
const { createSiteResolver } = require('./site')
const { serverString } = require('../version')
const { createAcmeChallengeStage } = require('./stages/acme-challenge')
const { createHeadersStage } = require('./stages/headers')
const { createHealthStage } = require('./stages/health')
const { createRequestTargetStage } = require('./stages/request-target')
const { createBlocklistStage } = require('./stages/blocklist')
const { createSanitizeStage } = require('./stages/sanitize')
const { createHttpsRedirectStage } = require('./stages/https-redirect')
const { createRewriteStage } = require('./stages/rewrite')
const { createPathHeadersStage } = require('./stages/path-headers')
const { createCachePurgeStage } = require('./stages/cache-purge')
const { createForbiddenStage } = require('./stages/forbidden')
const { createNonStandardCodesStage } = require('./stages/non-standard-codes')
const { createAuthStage } = require('./stages/auth')
const { createTrailingSlashStage } = require('./stages/trailing-slash')
const { createProxyStage } = require('./stages/proxy')
const { createAppCacheStage } = require('./stages/app-cache')
const { createHandlersStage, createProxyHandlersStage } = require('./stages/handlers')
const { createMethodsStage } = require('./stages/methods')
const { createStatusStage } = require('./stages/status')
const { createMetricsStage } = require('./stages/metrics')
const { createStaticStage } = require('./stages/static')
const { createRateLimitStage } = require('./stages/rate-limit')
const { createListingStage } = require('./stages/listing')
const { createLinks } = require('../application/links')
const { commandTable } = require('../application/commands')
const { createConnectHandler } = require('./connect')
const { Lifecycle } = require('./lifecycle')
const { promote, onBareStream } = require('../http2/promote')
const { runInRequestScopeToEnd } = require('../application/request-scope')
const { pipelineResponseCache } = require('../cache/worker-cache')

/**
 * The request pipeline, in SVR.JS 3.x order (docs/pipeline.md). Each entry
 * is a factory `(options, shared)` that runs once per worker at boot and
 * returns the per-request handler `(req, res, ctx) => boolean |
 * Promise<boolean>` (true: the stage has taken charge of the response;
 * false: pass the request on), or null when the configuration leaves the
 * stage nothing to do, so that it costs nothing per request.
 */
const STAGES = [
  // Automatic HTTPS's http-01 tokens: no site rule may keep the CA from them.
  createAcmeChallengeStage,
  createHeadersStage, // Server and customHeaders first, so every answer carries them
  createHealthStage, // load balancers' checks never depend on the site's rules
  createRequestTargetStage,
  createBlocklistStage, // before sanitizing, as in SVR.JS
  createSanitizeStage,
  createHttpsRedirectStage, // only requests on the plain-HTTP server of a secure setup
  createRewriteStage,
  createPathHeadersStage, // the URL is final: no later stage changes it
  // PURGE names the URL a GET's answer is cached under; it is the operator's
  // (this machine only), so the visitors' access rules below do not apply.
  createCachePurgeStage,
  createForbiddenStage, // access rules judge the rewritten path
  createNonStandardCodesStage,
  // Basic auth (401 entries) before the trailing-slash redirect, so
  // directory existence is not revealed to strangers.
  createAuthStage,
  // Rate limits after auth, which names the user they may be kept per,
  // and before everything that costs the server work.
  createRateLimitStage,
  createTrailingSlashStage,
  // Proxy routes are protected by every check above and answered before
  // mods and the script, where a 3.x proxy mod sat.
  createProxyStage,
  // `cache` rules answer from the response cache instead of running mods
  // and the script, or keep what these answer.
  createAppCacheStage,
  // Mods and serverSideScript.js run after every access check and before
  // the built-in handlers, which they may shadow.
  createHandlersStage,
  createMethodsStage,
  createStatusStage,
  createMetricsStage,
  createStaticStage,
  createListingStage
]

// Absolute-form targets (`GET http://host/x`), when a mod can proxy: the
// path rules of this site do not apply to another site's URL, the block
// list does. Without such a mod they take the main pipeline and get 501.
const PROXY_STAGES = [
  createBlocklistStage,
  createHttpsRedirectStage,
  createAuthStage,
  createProxyHandlersStage
]

/**
 * Per-pipeline services the stages share, and the worker's runtime.
 * @param {object} options runtime options
 * @param {import('./runtime').Runtime} runtime
 */
function createShared (options, runtime) {
  const shared = {
    // What the process holds across reloads: coordinator client, blocklist.
    runtime,
    log: runtime.log,
    // Reports every request once its response is over (the access log and the metrics).
    accessLog: runtime.accessLog,
    serverString: serverString(options.config),
    // The virtual-host entries, resolved once per request (ctx.site).
    sites: null,
    respond: null,
    // What the worker knows of the webroot's files: stats, index files,
    // symlink verdicts, sidecars and small bodies (lib/file-store).
    files: createFileStore(options.config),
    // Ready, starting or draining: what the health path reports.
    lifecycle: new Lifecycle(options.config.healthReadyDelay),
    // The mods and script, loaded once: chain links, and their names (and
    // versions) for the log and the status page.
    links: [],
    mods: [],
    // The response cache of proxy routes and `cache` rules (lib/cache/worker-cache.js), null when nothing caches.
    responseCache: pipelineResponseCache(runtime, options.config)
  }
  shared.sites = createSiteResolver(options.config, shared.serverString)
  shared.respond = createResponder(options, shared)
  shared.links = createLinks(options, shared)
  shared.mods = shared.links.map((link) => link.version === undefined ? link.name : link.name + ' ' + link.version)
  return shared
}

/**
 * @param {object} options runtime options
 * @param {import('./runtime').Runtime} runtime the process's runtime
 * @returns {{handleRequest: (req, res) => void, sendError: (req, res, status) => void,
 *   handleConnect: (req, socket, head) => void, mods: string[], commands: Map<string, object[]>,
 *   lifecycle: Lifecycle, runtime: import('./runtime').Runtime}} commands: the mods' console
 *   commands (lib/application/commands.js)
 */
function createPipeline (options, runtime) {
  const shared = createShared(options, runtime)
  const stages = buildStages(STAGES, options, shared)
  const proxyStages = buildStages(PROXY_STAGES, options, shared)
  const proxying = shared.links.some((link) => typeof link.proxyRequest === 'function')
  const setCustomHeaders = createHeadersStage(options, shared)
  const { stats } = runtime
  // A request arrives: its context is made here, once, and goes through
  // the stages to respond and, when the response is over, to the access log.
  function handleRequest (req, res) {
    const ctx = createContext(req, res, options, shared)
    stats.countRequest(res, ctx.log !== null)
    ctx.inPipeline = true
    if (proxying && isAbsoluteForm(req.url)) {
      ctx.isProxy = true
      runStages(proxyStages, 0, req, res, ctx, 501)
    } else {
      runStages(stages, 0, req, res, ctx, 404)
    }
  }
  // Answers decided before the pipeline (413 on Content-Length, 417, an
  // HTTP/2 CONNECT) carry Server and the custom headers like any other.
  function sendError (req, res, status) {
    const ctx = createContext(req, res, options, shared)
    stats.countRequest(res, ctx.log !== null)
    setCustomHeaders(req, res, ctx)
    shared.respond.sendError(ctx, status)
  }
  const handleConnect = createConnectHandler(options, shared)
  const commands = commandTable(shared.links)
  return { handleRequest, sendError, handleConnect, mods: shared.mods, commands, lifecycle: shared.lifecycle, runtime }
}

function buildStages (factories, options, shared) {
  const stages = []
  for (const create of factories) {
    const stage = create(options, shared)
    if (stage !== null) stages.push(stage)
  }
  return stages
}

function isAbsoluteForm (url) {
  const first = url.charCodeAt(0)
  return first !== 47 /* / */ && url !== '*'
}

/**
 * @param {Function[]} stages
 * @param {number} start
 * @param {object} req
 * @param {object} res
 * @param {object} ctx
 * @param {number} unanswered the status when no stage answers: 404, or 501
 *   for a proxy request no mod took
 */
function runStages (stages, start, req, res, ctx, unanswered) {
  for (let i = start; i < stages.length; i++) {
    const stage = stages[i]
    // Once the mods and the script have taken the request, the stages after
    // them run in its request scope, since they answer through methods that
    // application code may have wrapped. The scope is entered once for the
    // links and all of them (an async context frame, a Map, on Node 24; a
    // second one to leave it only where svr goes on after them), and again
    // only for the rest after a stage that answered later; what follows them
    // (the unanswered error page, a failure) is svr's own again, outside it.
    // The stage that answers is the end of this callback's work: nothing
    // after runStages may run in it.
    if (ctx.applicationScope !== null) {
      runInScope(stages, i, ctx, unanswered)
      return
    }
    // An HTTP/2 request reaching application code gets Node's objects from
    // here on; the stages after it (and its context) answer through them too.
    if (stage.needsNodeObjects === true && onBareStream(req)) ({ req, res } = promote(req, res))
    // The mods and the script: their chain is made first, so that one entry
    // of its scope serves them and the stages after them.
    if (stage.opensScope !== undefined) {
      stage.opensScope(req, res, ctx)
      runInScope(stages, i, ctx, unanswered)
      return
    }
    let result
    try {
      result = stage(req, res, ctx)
    } catch (err) {
      fail(req, res, ctx, err)
      return
    }
    if (result === true) return
    if (isThenable(result)) {
      continueAfter(result, stages, i, req, res, ctx, unanswered)
      return
    }
  }
  ctx.shared.respond.sendError(ctx, unanswered)
}

function runInScope (stages, start, ctx, unanswered) {
  let outcome
  try {
    outcome = runInRequestScopeToEnd(ctx.applicationScope, runScopedStages, stages, start, ctx)
  } catch (err) {
    fail(ctx.req, ctx.res, ctx, err)
    return
  }
  if (outcome === true) return
  if (outcome === false) ctx.shared.respond.sendError(ctx, unanswered)
  else continueAfter(outcome.result, stages, outcome.at, ctx.req, ctx.res, ctx, unanswered)
}

/**
 * The stages from `start` on, inside the request scope; an exception
 * leaves through runInScope.
 * @returns {true | false | {at: number, result: PromiseLike<boolean>}} true:
 *   answered; false: no stage answered; else the stage that answers later
 */
function runScopedStages (stages, start, ctx) {
  for (let i = start; i < stages.length; i++) {
    const stage = stages[i]
    if (stage.needsNodeObjects === true && onBareStream(ctx.req)) promote(ctx.req, ctx.res)
    const result = stage(ctx.req, ctx.res, ctx)
    if (result === true) return true
    if (isThenable(result)) return { at: i, result }
  }
  return false
}

// Called outside the request scope: the rest of the stages starts where
// the stage left it, as when it answered at once.
function continueAfter (result, stages, at, req, res, ctx, unanswered) {
  result.then(
    (done) => { if (done !== true) runStages(stages, at + 1, req, res, ctx, unanswered) },
    (err) => fail(req, res, ctx, err)
  )
}

function isThenable (result) {
  return result !== false && result !== undefined && typeof result.then === 'function'
}

function fail (req, res, ctx, err) {
  ctx.shared.log.error('request ' + ctx.requestId + ': ' + req.method + ' ' + ctx.originalUrl + ' failed:', err)
  ctx.shared.respond.sendError(ctx, 500, { error: err })
}

module.exports = { createPipeline, runStages, STAGES, PROXY_STAGES }
