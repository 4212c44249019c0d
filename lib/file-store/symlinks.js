'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { createTimedCache } = require('../util/timed-cache')

/**
 * The `followSymlinks` policy (SVR.JS followed every link, so a link in the
 * webroot could expose any readable file). `inside` serves a file only when its
 * real path lies in the webroot's real path; `never` only when its real path
 * is the path itself, that is when no link below the webroot is crossed.
 * The webroot itself may be a link (a `current -> releases/42` deploy), so
 * its real path is looked up again whenever a file seems to lie outside it.
 * @param {'never'|'inside'|'always'} mode
 * @param {string} root absolute webroot
 * @returns {((file: string) => Promise<boolean>) | null} whether the file may
 *   be served (rejects with the realpath error, such as ENOENT or ELOOP);
 *   null for `always`
 */
function createSymlinkPolicy (mode, root) {
  if (mode === 'always') return null
  const lexicalRoot = path.resolve(root)
  const inside = mode === 'inside'
  let realRoot = null

  function accepts (real, file) {
    if (inside) {
      const prefix = realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep
      return real === realRoot || real.startsWith(prefix)
    }
    return real === realRoot + trimTrailingSeparator(file.slice(lexicalRoot.length))
  }

  return async function mayFollow (file) {
    if (realRoot === null) realRoot = await fs.realpath(lexicalRoot)
    const real = await fs.realpath(file)
    if (accepts(real, file)) return true
    const before = realRoot
    realRoot = await fs.realpath(lexicalRoot)
    return realRoot !== before && accepts(real, file)
  }
}

function trimTrailingSeparator (relative) {
  let end = relative.length
  while (end > 0 && relative[end - 1] === path.sep) end--
  return end === relative.length ? relative : relative.slice(0, end)
}

/**
 * The policy's verdicts, remembered per path for `ttl` ms (as nginx's
 * open_file_cache does with disable_symlinks), so that a hot file costs no
 * realpath per request. A verdict holds only for the file it was given on:
 * the caller passes stats taken during the request, and a path that now
 * leads to another file (replaced by a link out of the webroot, say) is
 * judged anew at once. Without stats, or with a `ttl` of 0, every call is
 * judged. Errors are not remembered.
 * @param {((file: string) => Promise<boolean>) | null} mayFollow from createSymlinkPolicy
 * @param {{ttl: number, maxEntries: number}} options
 * @returns {((file: string, stat?: import('node:fs').Stats) => Promise<boolean>) | null}
 */
function rememberVerdicts (mayFollow, { ttl, maxEntries }) {
  if (mayFollow === null) return null
  if (ttl <= 0) return (file) => mayFollow(file)
  const verdicts = createTimedCache({ ttl, max: maxEntries })
  return async function mayFollowRemembered (file, stat) {
    if (stat === undefined) return mayFollow(file)
    const known = verdicts.get(file)
    if (known !== undefined && sameFile(known, stat)) return known.verdict
    const verdict = await mayFollow(file)
    verdicts.set(file, { verdict, dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs })
    return verdict
  }
}

// The same inode, not replaced since (an inode number reused by a new file
// comes with a new ctime).
function sameFile (known, stat) {
  return known.ino === stat.ino && known.dev === stat.dev && known.ctimeMs === stat.ctimeMs
}

module.exports = { createSymlinkPolicy, rememberVerdicts }
