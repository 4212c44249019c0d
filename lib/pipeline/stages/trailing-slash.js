'use strict'

const { statOnce, statFresh, knownStat } = require('../../file-store/request-stats')
const { fixRawBytes } = require('../../paths/percent')
const { relativeLocation } = require('../../paths/relative-location')

/**
 * A directory requested without its trailing slash: 301 to the path the
 * client asked for (before any rewrite or postfix) plus `/`, query kept, so
 * that relative links inside the directory's index resolve. The `Location`
 * is relative: nothing from the Host header goes into it.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null when
 *   `disableTrailingSlashRedirects` is set
 */
function createTrailingSlashStage (options, shared) {
  if (options.config.disableTrailingSlashRedirects) return null
  const { respond } = shared

  return function redirectDirectory (req, res, ctx) {
    if (endsWithSlash(ctx.pathname) || endsWithSlash(ctx.origHref)) return false
    // Most paths are hot in the stat cache and not directories: passed on
    // without a promise.
    const known = knownStat(ctx)
    if (known === null || (known !== undefined && !known.isDirectory())) return false
    return redirectIfDirectory(req, res, ctx, respond)
  }
}

async function redirectIfDirectory (req, res, ctx, respond) {
  const stats = await statOnce(ctx)
  if (stats === null || !stats.isDirectory()) return false
  // Browsers keep a 301 for good: it is not built on stats that may be a
  // TTL old. Only directories asked for without their slash pay the stat.
  const today = await statFresh(ctx)
  if (today === null || !today.isDirectory()) return false
  respond.redirect(ctx, relativeLocation(ctx.origHref + '/', originalSearch(ctx)), 301)
  return true
}

function endsWithSlash (path) {
  return path.charCodeAt(path.length - 1) === 47 /* / */
}

// A rewrite may have replaced ctx.search; the client's own query goes back to it.
function originalSearch (ctx) {
  const query = ctx.originalUrl.indexOf('?')
  return query === -1 ? '' : fixRawBytes(ctx.originalUrl.slice(query))
}

module.exports = { createTrailingSlashStage }
