'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { createTtlMap } = require('./ttl-map')

/**
 * The `followSymlinks` policy (§8 S3). `inside` serves a file only when its
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
 * realpath per request. A link changed meanwhile is judged anew at the
 * latest `ttl` ms later. Errors are not remembered.
 * @param {((file: string) => Promise<boolean>) | null} mayFollow from createSymlinkPolicy
 * @param {{ttl?: number, maxEntries?: number}} [options]
 * @returns {((file: string) => Promise<boolean>) | null}
 */
function rememberVerdicts (mayFollow, { ttl = 1000, maxEntries = 4096 } = {}) {
  if (mayFollow === null) return null
  const verdicts = createTtlMap({ ttl, maxEntries })
  return async function mayFollowRemembered (file) {
    const known = verdicts.get(file)
    if (known !== undefined) return known
    const verdict = await mayFollow(file)
    verdicts.set(file, verdict)
    return verdict
  }
}

module.exports = { createSymlinkPolicy, rememberVerdicts }
