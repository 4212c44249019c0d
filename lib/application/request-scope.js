'use strict'

const { AsyncLocalStorage, AsyncResource } = require('node:async_hooks')

// Application code (serverSideScript.js, mods) runs inside this scope, so an
// exception thrown later from one of its callbacks, or a promise it leaves
// rejected, can still be traced to the request that started it: that request
// gets a 500 instead of the whole worker going down with every other
// request in flight. A mod's console command runs in one too, with a `fail`
// of its own instead of a request.
const scope = new AsyncLocalStorage()

/**
 * Whether a scope entered with enterWith ends when the callback that
 * entered it returns. So it does where Node keeps async context in frames
 * (the default of Node 24, and Node 22 with the flag svr gives its
 * workers): Node puts back the frame it found on leaving every callback it
 * makes (an I/O event, a tick, a timer, a promise reaction). With async
 * hooks, enterWith stores on the callback's resource, the connection's
 * parser among them, and would outlive the request. Asked of Node itself,
 * once, with a resource of its own, rather than read off its version and
 * flags.
 * @returns {boolean}
 */
function enterWithEndsWithCallback () {
  const probe = new AsyncLocalStorage()
  const callback = new AsyncResource('SVR_SCOPE_PROBE')
  callback.runInAsyncScope(() => probe.enterWith(true))
  const kept = callback.runInAsyncScope(() => probe.getStore())
  // With hooks, an enabled storage costs every new async resource a call.
  probe.disable()
  return kept === undefined
}

const FRAMES = enterWithEndsWithCallback()

/**
 * Run fn(a, b, c) in the request's scope. Where the scope is the current one
 * already (the mods and the script, run by the pipeline from inside it), fn
 * is called as it is: AsyncLocalStorage#run would find its store current and
 * call fn too, by way of an arguments array and Reflect.apply, about 180
 * instructions a request. Its callers pass at most three arguments, named
 * here for the same reason.
 * @param {{req: object, res: object, ctx: object} | object} request
 * @param {(a: any, b: any, c: any) => any} fn
 * @param {any} [a]
 * @param {any} [b]
 * @param {any} [c]
 */
function runInRequestScope (request, fn, a, b, c) {
  if (scope.getStore() === request) return fn(a, b, c)
  return scope.run(request, fn, a, b, c)
}

/**
 * Run fn(a, b, c) in the request's scope for a caller that returns to Node
 * as soon as fn answers (returns true). With frames the scope is then left
 * as it is, for Node to end with the callback: one async context frame (a
 * Map) per request, where run makes a second to restore the one before.
 * When fn returns anything else or throws, the caller goes on with svr's
 * own work, so the frame before is restored first, as run does. The
 * arguments are named, as runInRequestScope's are.
 * @param {{req: object, res: object, ctx: object}} request
 * @param {(a: any, b: any, c: any) => any} fn
 * @param {any} a
 * @param {any} b
 * @param {any} c
 */
function runInRequestScopeToEnd (request, fn, a, b, c) {
  if (!FRAMES) return scope.run(request, fn, a, b, c)
  const prior = scope.getStore()
  if (prior === request) return fn(a, b, c)
  scope.enterWith(request)
  let result
  try {
    result = fn(a, b, c)
  } catch (err) {
    scope.enterWith(prior)
    throw err
  }
  if (result !== true) scope.enterWith(prior)
  return result
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

module.exports = { runInRequestScope, runInRequestScopeToEnd, runOutsideRequestScope, currentRequest, containRequestError }
