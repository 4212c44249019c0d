'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')

/**
 * Read a config.json for editing.
 * @param {string} file
 * @returns {Promise<{file: string, data: object, newline: boolean, stat: import('node:fs').Stats}>}
 *   `file` with symbolic links resolved, so that writing replaces the real
 *   file rather than the link; `newline`: whether the text ended with one
 * @throws {Error} unreadable, not JSON, not an object, or `users` not an array
 */
async function readConfigFile (file) {
  let real
  let text
  try {
    real = await fs.realpath(file)
    text = await fs.readFile(real, 'utf8')
  } catch (err) {
    throw new Error('cannot read ' + file + ': ' + err.message, { cause: err })
  }
  let data
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw new Error(file + ' is not valid JSON: ' + err.message, { cause: err })
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error(file + ' does not hold a JSON object')
  if (data.users !== undefined && !Array.isArray(data.users)) throw new Error(file + ': "users" is not an array')
  const stat = await fs.stat(real)
  return { file: real, data, newline: text.endsWith('\n'), stat }
}

/**
 * Replace the file in one step: write a temporary file beside it with the
 * same mode (and owner, when allowed), flush it to disk, then rename it
 * over the original. A crash leaves either the old file or the new one,
 * never half of each; the server, which reads the file on reload, never
 * sees a partial one.
 * @param {{file: string, data: object, newline: boolean, stat: import('node:fs').Stats}} config from readConfigFile
 * @returns {Promise<void>}
 */
async function writeConfigFile (config) {
  const { file, stat } = config
  const text = JSON.stringify(config.data, null, 2) + (config.newline ? '\n' : '')
  const dir = path.dirname(file)
  const temp = path.join(dir, '.' + path.basename(file) + '.' + process.pid + '-' + crypto.randomBytes(4).toString('hex') + '.tmp')
  const mode = stat.mode & 0o7777
  try {
    const handle = await fs.open(temp, 'wx', mode)
    try {
      await handle.writeFile(text)
      // open() applied the umask.
      await handle.chmod(mode)
      await keepOwner(handle, stat)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (err) {
    await fs.rm(temp, { force: true })
    throw new Error('cannot write ' + file + ': ' + err.message, { cause: err })
  }
  await syncDirectory(dir)
}

// Only root may give a file to another owner; anyone else keeps their own.
async function keepOwner (handle, stat) {
  try {
    await handle.chown(stat.uid, stat.gid)
  } catch (err) {
    if (err.code !== 'EPERM' && err.code !== 'EINVAL') throw err
  }
}

// The rename is durable once the directory entry is on disk too. Not every
// platform can open a directory for that, and the file is already complete.
async function syncDirectory (dir) {
  let handle
  try {
    handle = await fs.open(dir, 'r')
    await handle.sync()
  } catch {
    // Best effort: see above.
  } finally {
    if (handle !== undefined) await handle.close()
  }
}

module.exports = { readConfigFile, writeConfigFile }
