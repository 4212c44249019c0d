'use strict'

const fs = require('node:fs/promises')
const { rmSync } = require('node:fs')
const path = require('node:path')
const { svrError } = require('../../errors')
const { makePrivateTemp } = require('../../util/private-temp')
const { tempDir, ensureTempDir, isWithin, MODS_TEMP_PREFIX } = require('../../config/server-root')
const { modsDir } = require('../locate')

const LEGACY_ARCHIVE = /\.(?:tar\.gz|tgz)$/
const MODERN_FILE = /\.c?js$/
// Files that document a mods directory rather than being mods.
const NOT_A_MOD = /^\.|\.(?:md|txt)$/i

/**
 * Read the mods directory (beside the configuration file) in alphabetical
 * order and get every mod ready for the workers: SVR.JS 3.x archives are
 * unpacked once, here, into `<server root>/temp/modloader-<pid>-<random>/<file>/`
 * so that a mod's `__dirname + "/../../.."` is the server root, as under
 * SVR.JS; 4.x `.js` mods are used in place. Runs in the primary.
 * @param {object} options runtime options
 * @returns {Promise<{mods: object[], ignored: string[], remove: () => void}>} `ignored`
 *   lists files that are not mods; `remove` deletes the unpacked files and
 *   also runs when the process exits
 * @throws {SvrError} SVR_ERR_MOD_LOAD naming the file
 */
async function prepareMods (options) {
  const none = { mods: [], ignored: [], remove () {} }
  if (options.disableMods) return none
  const dir = modsDir(options)
  const names = await modFileNames(dir)
  if (names === null) return none
  let runtime = null
  const mods = []
  const ignored = []
  try {
    for (const name of names) {
      const file = path.join(dir, name)
      if (LEGACY_ARCHIVE.test(name)) {
        runtime = runtime || await makeUnpackDir(options, file)
        mods.push(await unpackLegacyMod(file, path.join(runtime, name)))
      } else if (MODERN_FILE.test(name)) {
        mods.push({ kind: 'modern', file, name })
      } else if (!NOT_A_MOD.test(name)) {
        ignored.push(file)
      }
    }
  } catch (err) {
    if (runtime !== null) await fs.rm(runtime, { recursive: true, force: true })
    throw err
  }
  if (runtime === null) return { mods, ignored, remove () {} }
  const unpacked = runtime
  function remove () {
    process.removeListener('exit', remove)
    // Also runs as an 'exit' handler, where only synchronous calls work.
    rmSync(unpacked, { recursive: true, force: true })
  }
  process.once('exit', remove)
  return { mods, ignored, remove }
}

/**
 * The files of a mods directory, in the chain's (alphabetical) order.
 * @param {string} dir
 * @returns {Promise<string[]|null>} null when there is no such directory
 * @throws {SvrError} SVR_ERR_MOD_LOAD when it cannot be read
 */
async function modFileNames (dir) {
  let names
  try {
    names = (await fs.readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() || d.isSymbolicLink()).map((d) => d.name)
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw svrError('SVR_ERR_MOD_LOAD', [dir, err.message], { cause: err })
  }
  return names.sort()
}

/**
 * The SVR.JS 4.x (`.js`) mods of the mods directory, in chain order.
 * @param {{configFile: string}} options
 * @returns {Promise<string[]>} absolute paths
 */
async function modernModFiles (options) {
  const dir = modsDir(options)
  const names = await modFileNames(dir)
  return names === null ? [] : names.filter((name) => MODERN_FILE.test(name)).map((name) => path.join(dir, name))
}

// A directory of its own per start or reload: workers still draining after a
// reload keep the files their mods were loaded from.
async function makeUnpackDir (options, file) {
  let temp
  try {
    temp = await ensureTempDir(options)
  } catch (err) {
    throw svrError('SVR_ERR_MOD_LOAD', [file, 'cannot make ' + tempDir(options) + ', where 3.x mods are unpacked: ' + err.message], { cause: err })
  }
  if (await isWithin(temp, options.config.wwwroot)) {
    throw svrError('SVR_ERR_MOD_LOAD', [file, temp + ', where 3.x mods are unpacked, lies inside the webroot ' +
      options.config.wwwroot + '; keep the webroot outside the directory of the configuration file'])
  }
  return makePrivateTemp(MODS_TEMP_PREFIX, temp)
}

async function unpackLegacyMod (file, dir) {
  await fs.mkdir(dir)
  try {
    // node-tar refuses absolute paths and `..` entries unless told otherwise.
    // Loaded here, not at the top: only a config with 3.x mods needs it.
    await require('tar').x({ file, cwd: dir, strict: true })
    await fs.access(path.join(dir, 'index.js'))
  } catch (err) {
    throw svrError('SVR_ERR_MOD_LOAD', [file, err.code === 'ENOENT' ? 'the archive has no index.js' : err.message], { cause: err })
  }
  const info = await readModInfo(dir)
  return { kind: 'legacy', file, dir, name: info.name, version: info.version }
}

async function readModInfo (dir) {
  try {
    const info = JSON.parse(await fs.readFile(path.join(dir, 'mod.info'), 'utf8'))
    return { name: String(info.name || path.basename(dir)), version: String(info.version || 'unknown') }
  } catch (err) {
    // SVR.JS kept such a mod active under a placeholder name.
    return { name: 'unknown mod (' + path.basename(dir) + '; ' + err.message + ')', version: 'ERROR' }
  }
}

module.exports = { prepareMods, modernModFiles }
