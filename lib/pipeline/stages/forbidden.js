'use strict'

const { buildForbiddenPaths, comparablePath, findForbidden } = require('../../access/forbidden-paths')
const { codeLocations } = require('../../application/locate')

const WELL_KNOWN = '/.well-known'

/**
 * Forbidden paths and the `dotfiles` policy, judged on the decoded,
 * rewritten path and ignoring case. The configuration file, certificates,
 * svr's code, mods and the like get 403 wherever they sit in the webroot;
 * a path with a segment starting with "." gets 403 (`deny`), 404 (`ignore`)
 * or passes (`allow`), except under /.well-known/ (RFC 8615), which ACME
 * challenges and security.txt need.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null}
 */
function createForbiddenStage (options, shared) {
  const table = buildForbiddenPaths(options, codeLocations(options))
  const { dotfiles, enableLogging } = options.config
  if (table.files.size === 0 && table.dirs.size === 0 && dotfiles === 'allow') return null
  const dotStatus = dotfiles === 'deny' ? 403 : dotfiles === 'ignore' ? 404 : 0
  const { respond, log } = shared
  return function checkForbidden (req, res, ctx) {
    // A plain path has no empty segment and no segment starting with `.`.
    const plain = ctx.plainPath !== null && ctx.decodedPath === ctx.plainPath
    const p = comparablePath(ctx.decodedPath, plain)
    const reason = findForbidden(table, p)
    if (reason !== null) {
      if (enableLogging) log.info('403 for ' + ctx.pathname + ' from ' + ctx.clientAddress + ': ' + reason)
      respond.sendError(ctx, 403)
      return true
    }
    if (dotStatus !== 0 && !plain && hasDotSegment(p)) {
      respond.sendError(ctx, dotStatus)
      return true
    }
    return false
  }
}

/**
 * @param {string} p comparable (lower-case) path
 * @returns {boolean} whether a segment other than a leading `.well-known` starts with "."
 */
function hasDotSegment (p) {
  let i = p.indexOf('/.')
  if (i === 0 && (p === WELL_KNOWN || p.startsWith(WELL_KNOWN + '/'))) i = p.indexOf('/.', WELL_KNOWN.length)
  return i !== -1
}

module.exports = { createForbiddenStage, hasDotSegment }
