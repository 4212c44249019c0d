'use strict'

const path = require('node:path')
const { createRequire } = require('node:module')
const { tempDir } = require('../config/server-root')

// The name SVR.JS gave the copy of the script it wrote into temp/.
const SCRIPT_NAME = 'serverSideScript.js'

/**
 * What a serverSideScript.js of the SVR.JS form finds as `__filename`,
 * `__dirname` and `require`. SVR.JS 3.x wrote the script into
 * `<server root>/temp/` and required it from there, so 3.x scripts keep
 * files at `__dirname + "/../temp/…"` and load helpers with
 * `require("../helper.js")`; svr compiles the script in memory but gives it
 * the same names. Relative paths that do not resolve the SVR.JS way are
 * tried from the script's real directory, where earlier svr versions
 * resolved them.
 * @param {{configFile: string}} options runtime options
 * @param {string} realFile the script's real path
 * @returns {{filename: string, dirname: string, require: NodeJS.Require}}
 */
function scriptEnvironment (options, realFile) {
  const dirname = tempDir(options)
  const filename = path.join(dirname, SCRIPT_NAME)
  const fallback = path.dirname(realFile) === dirname ? null : realFile
  return { filename, dirname, require: chainedRequire(filename, fallback) }
}

/**
 * A `require` anchored at `filename`; relative requests it cannot find are
 * resolved from `fallbackFile` instead. Bare package names need no fallback:
 * the worker's NODE_PATH ends with svr's own package directories.
 * @param {string} filename
 * @param {string|null} fallbackFile
 * @returns {NodeJS.Require}
 */
function chainedRequire (filename, fallbackFile) {
  const anchor = createRequire(filename)
  if (fallbackFile === null) return anchor
  const fallback = createRequire(fallbackFile)
  function resolve (request, options) {
    try {
      return anchor.resolve(request, options)
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND' || !isRelative(request)) throw err
      try {
        return fallback.resolve(request, options)
      } catch {
        throw err
      }
    }
  }
  resolve.paths = anchor.resolve.paths
  // Resolved first, so that a module missing inside the required file is
  // reported as it is instead of sending the lookup elsewhere.
  function scriptRequire (request) {
    return anchor(resolve(request))
  }
  scriptRequire.resolve = resolve
  scriptRequire.cache = anchor.cache
  scriptRequire.main = anchor.main
  return scriptRequire
}

function isRelative (request) {
  return request.startsWith('./') || request.startsWith('../') || request === '.' || request === '..'
}

module.exports = { scriptEnvironment, chainedRequire }
