'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')

// The directory SVR.JS 3.x code finds as `__dirname` of a script, and the
// one under which 3.x mods are unpacked.
// Name prefixes of the private temp directories svr makes for application
// code (lib/util/private-temp.js). SVR.JS unpacked 3.x mods into
// `<server root>/temp/modloader/<file>/`; one directory per start or reload
// keeps that depth.
const MODS_TEMP_PREFIX = 'modloader-'
const UPLOADS_TEMP_PREFIX = 'svr-uploads-'
const TEMP_NAME = 'temp'

/**
 * The server root: the directory of the configuration file, home of
 * `mods/`, `serverSideScript.js` and `temp/`. SVR.JS 3.x code reaches it
 * as `__dirname + "/.."` from a script and `__dirname + "/../../.."` from a
 * mod, so it must be the same directory for both.
 * @param {{configFile: string}} options runtime options (configFile is absolute)
 * @returns {string}
 */
function serverRoot (options) {
  return path.dirname(options.configFile)
}

/**
 * `<server root>/temp`: what SVR.JS 3.x scripts see as `__dirname`, and where
 * 3.x mods are unpacked.
 * @param {{configFile: string}} options
 * @returns {string}
 */
function tempDir (options) {
  return path.join(serverRoot(options), TEMP_NAME)
}

/**
 * Create `<server root>/temp` when it is missing, private to the user svr
 * runs as (an installer may have made it already, owned by the service
 * user). Nothing else under the server root is ever written by svr.
 * @param {{configFile: string}} options
 * @returns {Promise<string>} the directory
 * @throws {Error} the file system's error when it cannot be made
 */
async function ensureTempDir (options) {
  const dir = tempDir(options)
  try {
    await fs.mkdir(dir, { mode: 0o700 })
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    const stat = await fs.stat(dir)
    if (!stat.isDirectory()) throw Object.assign(new Error(dir + ' is not a directory'), { code: 'ENOTDIR' })
  }
  return dir
}

/**
 * Whether `inner` lies inside (or is) `outer`, both absolute, compared after
 * resolving symbolic links where the paths exist.
 * @param {string} inner
 * @param {string} outer
 * @returns {Promise<boolean>}
 */
async function isWithin (inner, outer) {
  const [a, b] = await Promise.all([realOrSelf(inner), realOrSelf(outer)])
  return a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep)
}

async function realOrSelf (file) {
  try {
    return await fs.realpath(file)
  } catch {
    return path.resolve(file)
  }
}

module.exports = { serverRoot, tempDir, ensureTempDir, isWithin, MODS_TEMP_PREFIX, UPLOADS_TEMP_PREFIX }
