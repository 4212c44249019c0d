'use strict'

const { toFsPath, PlainFsPaths } = require('../../paths/fs-path')
const { sanitizePath, pathForm, NOT_CLEAN, PLAIN } = require('../../paths/sanitize-path')
const { fixRawBytes, decodePath } = require('../../paths/percent')
const { relativeLocation } = require('../../paths/relative-location')

/**
 * Normalise the request path as SVR.JS 3.x did: decode what is safe to
 * decode, resolve dot segments, collapse slashes, strip trailing dots.
 * A path that changes is served under its clean form (`rewriteDirtyURLs`)
 * or redirected to it with a relative 301. Malformed escapes and invalid
 * UTF-8 are answered 400. Sets ctx.pathname, decodedPath, fsPath, search
 * and origHref for every later stage.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {(req, res, ctx) => boolean}
 */
function createSanitizeStage (options, shared) {
  const { config } = options
  const root = config.wwwroot
  const allowDoubleSlashes = config.allowDoubleSlashes
  const rewriteDirty = config.rewriteDirtyURLs
  const { respond } = shared
  const plainFsPaths = new PlainFsPaths(root)

  return function sanitize (req, res, ctx) {
    const url = fixRawBytes(req.url)
    // The context has split the target as received (no stage before this
    // one changes it); only one with bytes fixed is split again.
    let path = ctx.pathname
    let search = ctx.search
    if (url !== ctx.originalUrl) {
      const query = url.indexOf('?')
      path = query === -1 ? url : url.slice(0, query)
      search = query === -1 ? '' : url.slice(query)
    }
    const form = pathForm(path, allowDoubleSlashes)
    const clean = form === NOT_CLEAN ? sanitizePath(path, allowDoubleSlashes) : path
    // A plain path is its own decoded form and joins the root as it is.
    const decoded = form === PLAIN || clean === null ? clean : decodePath(clean)
    if (decoded === null) {
      respond.sendError(ctx, 400)
      return true
    }
    ctx.pathname = clean
    ctx.search = search
    ctx.decodedPath = decoded
    ctx.plainPath = form === PLAIN ? decoded : null
    ctx.fsPath = form === PLAIN ? plainFsPaths.of(decoded, url.length) : toFsPath(root, decoded, false)
    ctx.origHref = clean
    if (clean !== path && !rewriteDirty) {
      respond.redirect(ctx, relativeLocation(clean, search), 301)
      return true
    }
    // Only byte fixes (latin-1, hex case) or a dirty path served as clean:
    // later stages, mods and scripts see the clean URL.
    if (clean !== path || url !== req.url) req.url = clean + search
    return false
  }
}

module.exports = { createSanitizeStage }
