'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { collapseAllSlashes } = require('../paths/collapse-slashes')

const CONFIG = 'access to the configuration file or certificates is denied'
const SOURCES = 'access to server sources is denied'
const TEMP = 'access to the temporary folder is denied'
const LOG = 'access to log files is denied'

// Names editors and tools leave beside a file they edit (emacs `name~` and
// `#name#`, vim swap files, nano `.save`, manual copies): each holds the
// configuration, secrets included.
const BACKUP_NAMES = [
  (name) => name + '~',
  (name) => '#' + name + '#',
  (name) => '.' + name + '.swp',
  (name) => '.' + name + '.swo',
  (name) => name + '.swp',
  (name) => name + '.bak',
  (name) => name + '.old',
  (name) => name + '.orig',
  (name) => name + '.save',
  (name) => name + '.tmp'
]

/**
 * Work out once at boot which webroot paths must never be served: the
 * configuration file (and editor backups of it), TLS certificates and keys,
 * svr's own code, serverSideScript.js, the mods directory, node_modules/,
 * log/ and temp/. Each is listed by its webroot-relative path when it lies
 * inside the webroot, so with the default webroot beside the install
 * directory most entries never match anything.
 *
 * Code lives beside svr.js, beside the configuration file (mods/,
 * serverSideScript.js) and, with `useWebRootServerSideScript`, in the
 * webroot; a serverSideScript.js at the top of the webroot is refused in
 * every case, as SVR.JS's shipped rewrite rule did.
 *
 * Keys are lower-case: the check ignores case, because a case-insensitive
 * file system (macOS, Windows, some mounts) serves `/CONFIG.JSON` from
 * `config.json`.
 * @param {{config: object, configFile: string, installDir: string}} options
 * @param {{script: string, mods: string, temp: string}} code where application
 *   code is found and keeps its files (codeLocations of lib/application/locate.js)
 * @returns {{files: Map<string, string>, dirs: Map<string, string>}}
 *   webroot-relative path (lower-case, no trailing slash) -> reason
 */
function buildForbiddenPaths (options, code) {
  const { config, configFile, installDir } = options
  const table = { files: new Map(), dirs: new Map(), roots: variants(config.wwwroot) }
  const configDir = path.dirname(configFile)

  for (const file of [configFile, path.join(installDir, 'config.json')]) {
    addFile(table, file, CONFIG)
    for (const backup of BACKUP_NAMES) addFile(table, path.join(path.dirname(file), backup(path.basename(file))), CONFIG)
  }
  addFile(table, config.cert, CONFIG)
  addFile(table, config.key, CONFIG)
  for (const name of Object.keys(config.sni)) {
    addFile(table, config.sni[name].cert, CONFIG)
    addFile(table, config.sni[name].key, CONFIG)
  }
  // Scripts keep their files in the server root's temp/, and 3.x mods are unpacked there.
  addDir(table, code.temp, TEMP)
  addDir(table, path.join(installDir, 'temp'), TEMP)
  addDir(table, path.join(installDir, 'log'), LOG)
  if (config.disableServerSideScriptExpose || !config.exposeServerVersion) {
    // package.json and lib/ beside svr.js tell the version as well as svr.js does.
    addFile(table, path.join(installDir, 'svr.js'), SOURCES)
    addFile(table, path.join(installDir, 'package.json'), SOURCES)
    addDir(table, path.join(installDir, 'lib'), SOURCES)
  }
  if (config.disableServerSideScriptExpose) {
    addFile(table, code.script, SOURCES)
    for (const dir of [installDir, configDir, config.wwwroot]) addFile(table, path.join(dir, 'serverSideScript.js'), SOURCES)
    addDir(table, code.mods, SOURCES)
    addDir(table, path.join(installDir, 'mods'), SOURCES)
    for (const dir of [installDir, configDir, path.dirname(code.script)]) addDir(table, path.join(dir, 'node_modules'), SOURCES)
  }
  return { files: table.files, dirs: table.dirs }
}

function addFile (table, file, reason) {
  for (const key of webrootKeys(table.roots, file)) if (!table.files.has(key)) table.files.set(key, reason)
}

function addDir (table, dir, reason) {
  for (const key of webrootKeys(table.roots, dir)) if (!table.dirs.has(key)) table.dirs.set(key, reason)
}

// A symlinked webroot or install directory must not hide an entry, so both
// the given and the resolved form of each side are compared.
function webrootKeys (roots, target) {
  const keys = []
  for (const root of roots) {
    for (const candidate of variants(target)) {
      const key = webrootPath(root, candidate)
      if (key !== null && !keys.includes(key)) keys.push(key)
    }
  }
  return keys
}

function variants (file) {
  const absolute = path.resolve(file)
  let real = absolute
  try {
    real = fs.realpathSync.native(absolute)
  } catch {
    // Not there (yet): the given path is all there is to protect.
  }
  return real === absolute ? [absolute] : [absolute, real]
}

/**
 * @param {string} root absolute webroot
 * @param {string} target absolute path
 * @returns {string|null} '/a/b' (lower-case) when target lies strictly inside root
 */
function webrootPath (root, target) {
  const rel = path.relative(root, target)
  if (rel === '' || path.isAbsolute(rel) || rel === '..' || rel.startsWith('..' + path.sep)) return null
  return '/' + rel.split(path.sep).join('/').toLowerCase()
}

/**
 * The form of a decoded request path that buildForbiddenPaths keys are
 * compared with: slashes collapsed (allowDoubleSlashes keeps `//`, which
 * the file system ignores), no trailing slash, lower-case.
 * @param {string} decoded decoded request path starting with '/'
 * @param {boolean} [plain] whether it is plain (lib/paths/sanitize-path.js pathForm)
 * @returns {string}
 */
function comparablePath (decoded, plain = false) {
  // A plain path (lib/paths/sanitize-path.js pathForm) has no empty segment.
  let p = plain ? decoded : collapseAllSlashes(decoded)
  if (p.length > 1 && p.charCodeAt(p.length - 1) === 47 /* / */) p = p.slice(0, -1)
  return p.toLowerCase()
}

/**
 * @param {{files: Map<string, string>, dirs: Map<string, string>}} table
 * @param {string} p a comparablePath
 * @returns {string|null} why the path is refused, or null
 */
function findForbidden (table, p) {
  const file = table.files.get(p)
  if (file !== undefined) return file
  if (table.dirs.size === 0) return null
  // Every ancestor of the path (and the path itself) may be a listed directory.
  let end = p.indexOf('/', 1)
  while (end !== -1) {
    const dir = table.dirs.get(p.slice(0, end))
    if (dir !== undefined) return dir
    end = p.indexOf('/', end + 1)
  }
  const whole = table.dirs.get(p)
  return whole === undefined ? null : whole
}

module.exports = { buildForbiddenPaths, comparablePath, findForbidden, webrootPath }
