'use strict'

const fs = require('node:fs/promises')
const { CODINGS } = require('../static/compression')
const { createTimedCache } = require('../util/timed-cache')

/**
 * Precompressed sidecars: `file.br` and `file.gz` beside `file`, used when
 * they are regular files not older than it. Absent ones are remembered for
 * `ttl` ms, so a site without sidecars pays no extra stat per request.
 * @param {((file: string) => Promise<boolean>) | null} mayFollow the symlink
 *   policy, applied to the sidecar's own path
 * @param {{ttl: number, maxEntries: number}} options
 * @returns {{find: (file: string, stat: import('node:fs').Stats, codings: readonly string[]) =>
 *     Promise<{coding: object, path: string, stat: import('node:fs').Stats} | null>,
 *   knownAbsent: (file: string, codings: readonly string[]) => boolean}}
 */
function createSidecarFinder (mayFollow, { ttl, maxEntries }) {
  const absent = createTimedCache({ ttl, max: maxEntries })

  // Without waiting: whether find is sure to find none, every candidate
  // having been found absent a moment ago. A coded body held in memory
  // stands in for the on-the-fly one only then, so that a client gets the
  // sidecar whatever other clients asked for before.
  function knownAbsent (file, codings) {
    for (let i = 0; i < codings.length; i++) {
      if (absent.get(file + CODINGS[codings[i]].extension) === undefined) return false
    }
    return true
  }

  async function find (file, fileStat, codings) {
    for (let i = 0; i < codings.length; i++) {
      const coding = CODINGS[codings[i]]
      const candidate = file + coding.extension
      if (absent.get(candidate) !== undefined) continue
      const stat = await statSidecar(candidate, absent)
      if (stat === null || stat.mtimeMs < fileStat.mtimeMs) continue
      if (mayFollow !== null && !(await mayFollow(candidate).catch(refuse))) continue
      return { coding, path: candidate, stat }
    }
    return null
  }

  return { find, knownAbsent }
}

async function statSidecar (candidate, absent) {
  try {
    const stat = await fs.stat(candidate)
    if (stat.isFile()) return stat
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') absent.set(candidate, true)
  }
  return null
}

function refuse () {
  return false
}

module.exports = { createSidecarFinder }
