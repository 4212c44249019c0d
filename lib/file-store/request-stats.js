'use strict'

// A request's look at the file it maps to: asked of the worker's file store
// (./index.js) once per path, and kept on the request's context (its
// `stat`, `statPath` and `error`) for the stages after.

/**
 * Stat the file the request maps to, once: a later call returns the cached
 * result unless a rewrite pointed the request at another path since. The
 * stats come from the worker's file store (lib/file-store), so they may be
 * up to fileCacheTtl old; stages that must see the disk as it is now ask
 * the store for fresh ones (statFresh).
 * @param {import('../pipeline/request/context').RequestContext} ctx with fsPath set
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
 * @param {import('../pipeline/request/context').RequestContext} ctx with fsPath set
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
 * @param {import('../pipeline/request/context').RequestContext} ctx with fsPath set
 * @returns {Promise<import('node:fs').Stats|null>}
 */
function statFresh (ctx) {
  return remember(ctx, ctx.fsPath, ctx.shared.files.freshStat(ctx.fsPath))
}

module.exports = { statOnce, knownStat, statFresh }
