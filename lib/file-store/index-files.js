'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { createTimedCache } = require('../util/timed-cache')

const NO_INDEX = ''

/**
 * Find the index file of a directory: the first name in `names` that is a
 * regular file (SVR.JS: index.html, index.htm, index.xhtml). Which name a
 * directory uses is remembered for `ttl` ms, so that a request costs one
 * stat of the index file instead of up to three in a row, and a
 * directory without one costs none.
 * @param {string[]} names in order of preference
 * @param {{ttl: number, maxEntries: number}} options
 * @returns {(dir: string) => Promise<{name: string, path: string, stat: import('node:fs').Stats} | null>}
 */
function createIndexFinder (names, { ttl, maxEntries }) {
  const known = createTimedCache({ ttl, max: maxEntries })

  return async function findIndex (dir) {
    const cached = known.get(dir)
    if (cached === NO_INDEX) return null
    if (cached !== undefined) {
      const file = path.join(dir, cached)
      const stat = await statRegularFile(file)
      if (stat !== null) return { name: cached, path: file, stat }
    }
    const files = names.map((name) => path.join(dir, name))
    const stats = await Promise.all(files.map(statRegularFile))
    for (let i = 0; i < stats.length; i++) {
      if (stats[i] === null) continue
      known.set(dir, names[i])
      return { name: names[i], path: files[i], stat: stats[i] }
    }
    known.set(dir, NO_INDEX)
    return null
  }
}

// An index candidate that cannot be stat'ed is skipped, as in SVR.JS.
async function statRegularFile (file) {
  try {
    const stat = await fs.stat(file)
    return stat.isFile() ? stat : null
  } catch {
    return null
  }
}

module.exports = { createIndexFinder }
