'use strict'

const { createContext } = require('./context')
const { createResponder } = require('./respond')
const { serverString } = require('./version')
const { countRequest } = require('./stats')
const { createHeadersStage } = require('./stages/headers')
const { createRequestTargetStage } = require('./stages/request-target')
const { createBlocklistStage } = require('./stages/blocklist')
const { createSanitizeStage } = require('./stages/sanitize')
const { createRewriteStage } = require('./stages/rewrite')
const { createForbiddenStage } = require('./stages/forbidden')
const { createNonStandardCodesStage } = require('./stages/non-standard-codes')
const { createTrailingSlashStage } = require('./stages/trailing-slash')
const { createMethodsStage } = require('./stages/methods')
const { createStatusStage } = require('./stages/status')
const { createStaticStage } = require('./stages/static')
const { createListingStage } = require('./stages/listing')

/**
 * The request pipeline, in SVR.JS 3.x order (docs/pipeline.md). Each entry
 * is a factory `(options, shared)` that runs once per worker at boot and
 * returns the per-request handler `(req, res, ctx) => boolean |
 * Promise<boolean>` (true: the stage has taken charge of the response;
 * false: pass the request on), or null when the configuration leaves the
 * stage nothing to do, so that it costs nothing per request.
 */
const STAGES = [
  createHeadersStage, // Server and customHeaders first, so every answer carries them
  createRequestTargetStage,
  createBlocklistStage, // before sanitizing, as in SVR.JS
  createSanitizeStage,
  createRewriteStage,
  createForbiddenStage, // access rules judge the rewritten path
  createNonStandardCodesStage,
  // Basic auth (401 entries) slots in here, before the trailing-slash
  // redirect, so directory existence is not revealed to strangers.
  createTrailingSlashStage,
  // mods and serverSideScript.js slot in here: after every access check,
  // before the built-in handlers they may shadow.
  createMethodsStage,
  createStatusStage,
  createStaticStage,
  createListingStage
]

/**
 * Per-worker services the stages share.
 * @param {object} options runtime options
 * @param {object} log
 */
function createShared (options, log) {
  const shared = {
    log,
    serverString: serverString(options.config),
    respond: null
  }
  shared.respond = createResponder(options, shared)
  return shared
}

/**
 * @param {object} options runtime options
 * @param {object} log
 * @returns {{handleRequest: (req, res) => void, sendError: (req, res, status) => void}}
 */
function createPipeline (options, log) {
  const shared = createShared(options, log)
  const stages = []
  for (const create of STAGES) {
    const stage = create(options, shared)
    if (stage !== null) stages.push(stage)
  }
  function handleRequest (req, res) {
    countRequest(res)
    runStages(stages, 0, req, res, createContext(req, options, shared))
  }
  function sendError (req, res, status) {
    countRequest(res)
    shared.respond.sendError(req, res, status)
  }
  return { handleRequest, sendError }
}

function runStages (stages, start, req, res, ctx) {
  for (let i = start; i < stages.length; i++) {
    let result
    try {
      result = stages[i](req, res, ctx)
    } catch (err) {
      fail(req, res, ctx, err)
      return
    }
    if (result === true) return
    if (result !== false && result !== undefined && typeof result.then === 'function') {
      result.then(
        (done) => { if (done !== true) runStages(stages, i + 1, req, res, ctx) },
        (err) => fail(req, res, ctx, err)
      )
      return
    }
  }
  ctx.shared.respond.sendError(req, res, 404)
}

function fail (req, res, ctx, err) {
  ctx.shared.log.error(req.method + ' ' + ctx.originalUrl + ' failed:', err)
  ctx.shared.respond.sendError(req, res, 500, { error: err })
}

module.exports = { createPipeline, STAGES }
