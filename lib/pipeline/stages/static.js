'use strict'

const { statOnce, knownStat } = require('../../file-store/request-stats')
const { statusForFsError } = require('../../static/fs-errors')
const { createWriter } = require('../../static/writer')
const { refusal } = require('../../file-store/representation')

/**
 * Static files from the webroot, compressed when the client accepts it.
 * The path is stat'ed once (statOnce); a directory is served through its
 * index file, or left to the listing stage. The worker's file store
 * (shared.files, lib/file-store) resolves the request into a
 * representation, which the writer (lib/static/writer.js) sends.
 * @param {object} options runtime options
 * @param {{files: object, respond: object, log: object}} shared
 * @returns {(req, res, ctx) => boolean | Promise<boolean>}
 */
function createStaticStage (options, shared) {
  const { files } = shared
  const { write, refuse } = createWriter(options.config, shared)

  function failMissing (req, res, ctx) {
    const err = ctx.error !== null && ctx.error.path === ctx.fsPath ? ctx.error : null
    refuse(ctx, statusForFsError(err), err)
    return true
  }

  async function serveByStat (req, res, ctx) {
    const stat = await statOnce(ctx)
    if (stat === null) return failMissing(req, res, ctx)
    if (stat.isDirectory()) return serveDirectory(req, res, ctx)
    // FIFOs, sockets and devices: reading one could block or never end.
    const rep = stat.isFile() ? await files.resolve(req, ctx.pathname, ctx.fsPath, stat, false) : refusal(501, null)
    write(ctx, rep)
    return true
  }

  async function serveDirectory (req, res, ctx) {
    const index = await files.findIndex(ctx.fsPath)
    if (index === null) {
      // Not this stage's to answer, unless the directory is out of bounds.
      const refused = await files.judgeDirectory(ctx.fsPath)
      if (refused === null) return false
      write(ctx, refused)
      return true
    }
    write(ctx, await files.resolve(req, joinUrlPath(ctx.pathname, index.name), index.path, index.stat, true))
    return true
  }

  return function serveStatic (req, res, ctx) {
    if (ctx.fsPath === null || (req.method !== 'GET' && req.method !== 'HEAD')) return false
    // A hot path is answered without a promise: its stats, and for a small
    // file its body, are at hand.
    const stat = knownStat(ctx)
    if (stat === null) return failMissing(req, res, ctx)
    if (stat !== undefined && stat.isFile()) {
      const rep = files.held(req, ctx.pathname, ctx.fsPath, stat)
      if (rep !== null) {
        write(ctx, rep)
        return true
      }
    }
    return serveByStat(req, res, ctx)
  }
}

function joinUrlPath (dir, name) {
  return dir.charCodeAt(dir.length - 1) === 47 /* / */ ? dir + name : dir + '/' + name
}

module.exports = { createStaticStage }
