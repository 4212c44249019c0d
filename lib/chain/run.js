'use strict'

const { runInRequestScope } = require('../request-scope')

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
  return function runChain (req, res, ctx) {
    const chain = { req, res, ctx, settle: null, fellThrough: false }
    runInRequestScope(chain, runLink, 0, chain)
    if (chain.fellThrough) return false
    // Answered, or still working asynchronously: the promise settles only if
    // the chain later falls through to the pipeline.
    return new Promise((resolve) => { chain.settle = resolve })
  }

  function runLink (index, chain) {
    if (index === links.length) {
      if (chain.settle === null) chain.fellThrough = true
      else chain.settle(false)
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
    const { req, res, ctx } = chain
    shared.log.error(link.name + ' failed on ' + req.method + ' ' + ctx.originalUrl + ':', err)
    // Once the request has moved on, another stage owns the response.
    if (continued) return
    shared.respond.sendError(req, res, 500, { error: err })
  }
}

module.exports = { createChainRunner }
