'use strict'

const { AsyncLocalStorage } = require('node:async_hooks')

// Application code (serverSideScript.js, mods) runs inside this scope, so an
// exception thrown later from one of its callbacks, or a promise it leaves
// rejected, can still be traced to the request that started it: that request
// gets a 500 instead of the whole worker going down with every other
// request in flight. A mod's console command runs in one too, with a `fail`
// of its own instead of a request.
const scope = new AsyncLocalStorage()

/**
 * @param {{req: object, res: object, ctx: object}} request
 * @param {Function} fn
 * @param {...any} args
 */
function runInRequestScope (request, fn, ...args) {
  return scope.run(request, fn, ...args)
}

/**
 * Run fn outside any request's scope: the pipeline resuming after a link's
 * late next() is svr's code again, not the link's. By run with no store,
 * not exit: where the scope is kept with async hooks (Node 20, and 22
 * without async context frames), exit disables the storage and the next
 * run inside fn enables it again with the link's request as the store it
 * returns to, so svr's own answer after the stages (the 404 of a request
 * no stage answered) was made in the request's scope.
 * @param {Function} fn
 * @param {...any} args
 */
function runOutsideRequestScope (fn, ...args) {
  return scope.run(undefined, fn, ...args)
}

/**
 * @returns {{req: object, res: object, ctx: object} | undefined} the request
 *   whose application code is running (or whose callback threw)
 */
function currentRequest () {
  return scope.getStore()
}


/**
 * Answer the request whose application code threw asynchronously (or left a
 * promise rejected) with a 500, so that the worker and its other requests
 * live on.
 * @param {unknown} err
 * @param {object} log
 * @returns {boolean} false when no request can be blamed (the caller exits)
 */
function containRequestError (err, log) {
  const request = scope.getStore()
  if (request === undefined) return false
  // A mod's console command (lib/application/commands.js) reports its own failures.
  if (request.req === undefined) {
    request.fail(err)
    return true
  }
  const { req, res, ctx } = request
  log.error('uncaught error in application code on ' + req.method + ' ' + ctx.originalUrl + ':', err)
  if (res.headersSent) res.destroy()
  else ctx.shared.respond.sendError(ctx, 500, { error: err instanceof Error ? err : new Error(String(err)) })
  return true
}

module.exports = { runInRequestScope, runOutsideRequestScope, currentRequest, containRequestError }
