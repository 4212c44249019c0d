'use strict'

const { statusForFsError } = require('../static/fs-errors')
const { Representation, refusal } = require('./representation')

/**
 * What is read by its path is judged by today's stats (cached ones may
 * describe a file replaced since, by a link out of the webroot, or by a
 * directory) and by the followSymlinks policy, whose verdicts are kept
 * only for the file they were given on.
 * @param {object} stats the store's stat cache (lib/file-store/stats.js)
 * @param {((file: string, stat: import('node:fs').Stats) => Promise<boolean>) | null} mayFollow
 *   the remembered policy (lib/file-store/symlinks.js), null for `always`
 */
function createJudge (stats, mayFollow) {
  async function linkRefusal (file, stat) {
    if (mayFollow === null) return 0
    try {
      return (await mayFollow(file, stat)) ? 0 : 403
    } catch (err) {
      return statusForFsError(err)
    }
  }

  // Today's stats of `target` when they are of the kind wanted and the
  // policy lets it be followed, else a refusal.
  async function judgeFresh (target, isKind) {
    let stat
    try {
      stat = await stats.fresh(target)
    } catch (err) {
      return refusal(statusForFsError(err), err)
    }
    if (stat === null || !isKind(stat)) return refusal(404, null)
    return judgeLinks(target, stat)
  }

  async function judgeLinks (target, stat) {
    const status = await linkRefusal(target, stat)
    return status === 0 ? stat : refusal(status, null)
  }

  return {
    /**
     * @param {string} file
     * @param {import('node:fs').Stats|null} stat taken during the request,
     *   or null to take it now
     * @returns {Promise<import('node:fs').Stats|import('./representation').Representation>}
     *   the stats of the regular file to serve, or a refusal
     */
    file (file, stat) {
      return stat === null ? judgeFresh(file, isFile) : judgeLinks(file, stat)
    },

    /**
     * Whether a directory without an index file may be left to the
     * listing: judged on today's stats, as the listing reads it by its path.
     * @param {string} dir
     * @returns {Promise<import('./representation').Representation|null>} null
     *   when it may, else a refusal
     */
    async directory (dir) {
      const judged = await judgeFresh(dir, isDirectory)
      return judged instanceof Representation ? judged : null
    }
  }
}

function isFile (stat) {
  return stat.isFile()
}

function isDirectory (stat) {
  return stat.isDirectory()
}

module.exports = { createJudge }
