'use strict'

const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')


/**
 * A private (0700) directory whose name carries the owner's pid, so that
 * one left behind by a killed process can be told from one in use.
 * @param {string} prefix e.g. 'svr-uploads-'
 * @param {string} [parent] where to make it (the system temp directory by default)
 * @returns {Promise<string>}
 */
function makePrivateTemp (prefix, parent = os.tmpdir()) {
  return fs.mkdtemp(path.join(parent, prefix + process.pid + '-'))
}

/**
 * Remove the directories a process killed with SIGKILL (which skips exit
 * handlers) left behind: those with the prefix whose pid no longer runs.
 * @param {string} prefix
 * @param {string} [parent] where to look (the system temp directory by default)
 * @returns {Promise<number>} how many were removed
 */
async function removeOrphans (prefix, parent = os.tmpdir()) {
  let names
  try {
    names = await fs.readdir(parent)
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const pid = Number(name.slice(prefix.length, name.indexOf('-', prefix.length)))
    if (!Number.isInteger(pid) || pid <= 0 || isRunning(pid)) continue
    await fs.rm(path.join(parent, name), { recursive: true, force: true }).then(() => removed++, () => {})
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

module.exports = { makePrivateTemp, removeOrphans }
