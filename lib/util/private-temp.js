'use strict'

const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')

// Name prefixes of the private temp directories svr makes.
const MODS_TEMP_PREFIX = 'svr-mods-'
const UPLOADS_TEMP_PREFIX = 'svr-uploads-'

/**
 * A private (0700) directory in the system temp directory whose name carries
 * the owner's pid, so that one left behind by a killed process can be told
 * from one in use.
 * @param {string} prefix e.g. 'svr-mods-'
 * @returns {Promise<string>}
 */
function makePrivateTemp (prefix) {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix + process.pid + '-'))
}

/**
 * Remove the directories a process killed with SIGKILL (which skips exit
 * handlers) left behind: those with the prefix whose pid no longer runs.
 * @param {string} prefix
 * @returns {Promise<number>} how many were removed
 */
async function removeOrphans (prefix) {
  let names
  try {
    names = await fs.readdir(os.tmpdir())
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length, name.indexOf('-', prefix.length)))
    if (!Number.isInteger(pid) || pid <= 0 || isRunning(pid)) continue
    await fs.rm(path.join(os.tmpdir(), name), { recursive: true, force: true }).then(() => removed++, () => {})
  }
  return removed
}

function isRunning (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it runs, under another user.
    return err.code === 'EPERM'
  }
}

module.exports = { makePrivateTemp, removeOrphans, MODS_TEMP_PREFIX, UPLOADS_TEMP_PREFIX }
