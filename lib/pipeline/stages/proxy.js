'use strict'

const { compileRoutes, matchRoute } = require('../../proxy/routes')
const { forward } = require('../../proxy/forward')
const { forwardCached } = require('../../proxy/cached-forward')
const { countCacheResult } = require('../../metrics/cache')
const { tunnel } = require('../../proxy/tunnel')
const { watchHealth } = require('../../proxy/health-client')
const { workerCount } = require('../../config/worker-count')
const { promote, onBareStream } = require('../../http2/promote')

/**
 * The built-in reverse proxy (`proxy`, docs/proxy.md): a request whose path
 * and site match a route is forwarded to one of its upstreams, and the
 * answer streamed back. It runs after every access check and before mods
 * and the script, as a 3.x proxy mod did.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null} null without routes
 */
function createProxyStage (options, shared) {
  const { config } = options
  if (config.proxy.length === 0) return null
  const upstreams = shared.runtime.proxy
  // A --single-threaded server's one worker takes all of each `maxConnections`.
  const workers = shared.runtime.slot === null ? 1 : workerCount(config)
  const routes = compileRoutes(config, upstreams, options.proxyCa, workers)
  watchHealth(shared.runtime, config, options.proxyCa)
  const env = { respond: shared.respond, log: shared.log, upstreams, cache: shared.responseCache, cacheSettings: config.responseCache,
    countCache: (result) => countCacheResult(shared.runtime, result) }
  return function proxyRequest (req, res, ctx) {
    const route = matchRoute(routes, ctx)
    if (route === null) return false
    // Forwarding streams both ways through Node's request and response; an
    // HTTP/2 request begun on the bare stream gets them here, only when a
    // route takes it (nothing runs after this stage once it answers).
    if (onBareStream(req)) ({ req, res } = promote(req, res))
    // Node marks the HTTP/1.1 requests it handed over as 'upgrade'; an
    // HTTP/2 one (extended CONNECT) names its protocol in :protocol.
    const upgrade = req.upgrade === true || req.headers[':protocol'] !== undefined
    try {
      if (upgrade) tunnel(req, res, ctx, route, env)
      else if (route.cache !== null) forwardCached(req, res, ctx, route, env).catch((err) => failed(req, res, ctx, err))
      else forward(req, res, ctx, route, env)
    } catch (err) {
      failed(req, res, ctx, err)
    }
    return true
  }

  function failed (req, res, ctx, err) {
    shared.log.error('request ' + ctx.requestId + ': proxying failed:', err)
    shared.respond.sendError(ctx, 502, { error: err })
  }
}

module.exports = { createProxyStage }
