'use strict'

const { createChainRunner } = require('../../application/run')

/**
 * Mods, then serverSideScript.js: the application code, chained as in
 * SVR.JS (lib/application/run.js). The links were loaded once per worker by
 * createPipeline (shared.links).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null}
 */
function createHandlersStage (options, shared) {
  if (shared.links.length === 0) return null
  return needsNodeObjects(createChainRunner(shared.links, 'invoke', shared))
}

/**
 * Absolute-form (proxy) requests go only to the mods that declare a proxy
 * handler (SVR.JS `proxyCallback`, 4.x `proxy`/`proxySafe`).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null}
 */
function createProxyHandlersStage (options, shared) {
  const links = shared.links.filter((link) => typeof link.proxyRequest === 'function')
  if (links.length === 0) return null
  return needsNodeObjects(createChainRunner(links, 'proxyRequest', shared))
}

// Application code gets Node's request and response objects, also for an
// HTTP/2 request that svr's stages began on the bare stream (the pipeline
// makes them: lib/http2/promote.js).
function needsNodeObjects (stage) {
  stage.needsNodeObjects = true
  return stage
}

module.exports = { createHandlersStage, createProxyHandlersStage }
