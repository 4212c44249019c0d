'use strict'

const fs = require('node:fs')
const path = require('node:path')
const Module = require('node:module')

/**
 * Load a CommonJS file as a new module instance each time, the way
 * require() would load it the first time: with its own `module`, `exports`,
 * `require` (resolving from its directory), `__filename` and `__dirname`,
 * but without an entry in `require.cache`. A worker loads the script and
 * the mods once, at boot; with --single-threaded the worker that a reload
 * starts runs in the same process, and must see the files as they are now,
 * not as the process first loaded them. What the file itself requires is
 * cached as usual (as a cluster worker would cache it for its lifetime).
 * Runs at boot only, so reading the file synchronously costs no request.
 * @param {string} file absolute path (a symbolic link is followed, as require() does)
 * @returns {*} what the file assigned to `module.exports`
 */
function loadFreshModule (file) {
  file = fs.realpathSync(file)
  const fresh = new Module(file, module)
  fresh.filename = file
  fresh.paths = Module._nodeModulePaths(path.dirname(file))
  fresh._compile(stripBom(fs.readFileSync(file, 'utf8')), file)
  fresh.loaded = true
  return fresh.exports
}

// require() ignores a byte order mark at the start of a file.
function stripBom (source) {
  return source.charCodeAt(0) === 0xFEFF ? source.slice(1) : source
}

module.exports = { loadFreshModule }
