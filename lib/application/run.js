'use strict'

const { runInRequestScope, runOutsideRequestScope } = require('./request-scope')

/**
 * Run a request through a chain of links, as SVR.JS chains mods and the
 * script: each link gets a `next` (SVR.JS `elseCallback`) that hands the
 * request to the following link and, after the last one, back to the
 * pipeline.
 * @param {Array<object>} links
 * @param {string} method the link method to call: 'invoke' or 'proxyRequest'
 * @param {object} shared per-worker services
 * @returns {(req, res, ctx) => boolean | Promise<boolean>} a pipeline stage handler
 */
function createChainRunner (links, method, shared) {
  function runChain (req, res, ctx) {
    const chain = unstartedChain(ctx) || openChain(req, res, ctx)
    chain.entered = true
    // Free when the pipeline has entered the chain's scope already: the
    // scope is entered only where it is not the current one.
    runInRequestScope(chain, runLink, 0, chain)
    // A link that answered and still called next() has left nothing to add.
    if (chain.fellThrough) return res.writableEnded
    chain.started = true
    // Answered (a response, once ended, stays so): nothing is left for the
    // pipeline, whatever a link does later, so it has no continuation to
    // keep and leaves the request's scope to the callback's end.
    if (res.writableEnded) return true
    // Still working asynchronously: the pipeline goes on only if the chain
    // later falls through to it.
    return chain
  }
  // The pipeline opens the chain before it runs this stage, so that one
  // entry of the request scope serves the links and the stages after them
  // (lib/pipeline/pipeline.js runInScope).
  runChain.opensScope = openChain
  return runChain

  function runLink (index, chain) {
    if (index === links.length) {
      if (chain.started) chain.resume(chain.res.writableEnded)
      else chain.fellThrough = true
      return
    }
    const { req, res, ctx } = chain
    const link = links[index]
    let called = false
    function next () {
      if (called) {
        shared.log.warn(link.name + ' called elseCallback more than once for ' + req.method + ' ' + ctx.originalUrl)
        return
      }
      called = true
      runLink(index + 1, chain)
    }
    let result
    try {
      result = link[method](req, res, ctx, next)
    } catch (err) {
      fail(err, link, chain, called)
      return
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      result.then(undefined, (err) => fail(err, link, chain, called))
    }
  }

  function fail (err, link, chain, continued) {
    const { req, ctx } = chain
    shared.log.error(link.name + ' failed on ' + req.method + ' ' + ctx.originalUrl + ':', err)
    // Once the request has moved on, another stage owns the response.
    if (continued) return
    shared.respond.sendError(ctx, 500, { error: err })
  }
}

/**
 * Make a request's chain, the store of its request scope, and name it as
 * the context's (the stages after the links answer in that scope too).
 * @param {object} req
 * @param {object} res
 * @param {object} ctx
 * @returns {Chain}
 */
function openChain (req, res, ctx) {
  const chain = new Chain(req, res, ctx)
  ctx.applicationScope = chain
  return chain
}

// The chain the pipeline opened for this request, while its links have not run.
function unstartedChain (ctx) {
  const chain = ctx.applicationScope
  return chain instanceof Chain && !chain.entered ? chain : null
}

/**
 * One request's way through the links. Once the links have returned without
 * falling through, it is what the stage returns to the pipeline: a minimal
 * thenable, since most chains answer and never settle, and a promise per
 * request would cost an allocation and async-hook work for nothing.
 */
class Chain {
  constructor (req, res, ctx) {
    this.req = req
    this.res = res
    this.ctx = ctx
    // The links have been started on (runChain).
    this.entered = false
    this.fellThrough = false
    this.started = false
    this.onSettled = null
  }

  // The pipeline's continuation (lib/pipeline/pipeline.js runStages), called at most once.
  then (onSettled) {
    this.onSettled = onSettled
  }

  // In a microtask, as when this was a promise: a link that calls next()
  // from a callback of its own finishes that callback before the next
  // stage answers (a header it sets just after next() still goes out).
  resume (done) {
    const onSettled = this.onSettled
    this.onSettled = null
    if (onSettled !== null) queueMicrotask(() => runOutsideRequestScope(onSettled, done))
  }
}

module.exports = { createChainRunner }
