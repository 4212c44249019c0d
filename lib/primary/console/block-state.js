'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { compileAddressList } = require('../../access/address-list')

const STATE_FILE = 'blocklist.json'

/**
 * The addresses blocked at run time with the console's `block` command.
 * They are applied on top of `blacklist` and, with `stateDirectory`, kept
 * in blocklist.json there (written to a temporary file and renamed over
 * the old one, so a crash never leaves half a file). config.json is never
 * touched.
 */
class BlockState {
  /**
   * @param {object} options runtime options
   * @param {(entries: string[]) => void} apply makes a new list take effect
   * @param {object} log
   */
  constructor (options, apply, log) {
    this.file = stateFile(options)
    this.apply = apply
    this.log = log
    this.entries = []
    this.saving = Promise.resolve()
  }

  /**
   * Read the saved list (a missing file is an empty list). Entries that are
   * not addresses are skipped with a warning rather than stopping the start.
   * @returns {Promise<string[]>}
   */
  async load () {
    if (this.file === null) return this.entries
    let data
    try {
      data = JSON.parse(await fs.readFile(this.file, 'utf8'))
    } catch (err) {
      if (err.code !== 'ENOENT') this.log.warn('ignoring ' + this.file + ': ' + err.message)
      return this.entries
    }
    const saved = data !== null && Array.isArray(data.blocked) ? data.blocked : []
    for (const entry of saved) {
      const problem = entryProblem(entry)
      if (problem === null && !this.entries.includes(entry)) this.entries.push(entry)
      else if (problem !== null) this.log.warn(this.file + ': skipping ' + JSON.stringify(entry) + ': ' + problem)
    }
    if (this.entries.length !== 0) this.log.info('blocked from the console earlier: ' + this.entries.join(', '))
    return this.entries
  }

  /**
   * @param {string[]} args addresses, CIDR ranges or "localhost"
   * @returns {Promise<string[]>} one line of feedback per argument
   */
  block (args) {
    const lines = []
    let changed = false
    for (const entry of args) {
      const problem = entryProblem(entry)
      if (problem !== null) lines.push('not blocked: ' + entry + ': ' + problem)
      else if (this.entries.includes(entry)) lines.push('already blocked: ' + entry)
      else {
        this.entries.push(entry)
        changed = true
        lines.push('blocked: ' + entry)
      }
    }
    return this.commit(changed, lines)
  }

  /**
   * @param {string[]} args entries as they were blocked
   * @returns {Promise<string[]>}
   */
  unblock (args) {
    const lines = []
    let changed = false
    for (const entry of args) {
      const index = this.entries.indexOf(entry)
      if (index === -1) {
        lines.push('not blocked from the console: ' + entry + ' (entries of "blacklist" are changed in the configuration)')
      } else {
        this.entries.splice(index, 1)
        changed = true
        lines.push('unblocked: ' + entry)
      }
    }
    return this.commit(changed, lines)
  }

  async commit (changed, lines) {
    if (!changed) return lines
    this.apply(this.entries.slice())
    if (this.file === null) {
      lines.push('note: "stateDirectory" is not set, so this lasts until svr stops')
      return lines
    }
    // Saves run one after another, so an older list never overwrites a newer one.
    const entries = this.entries.slice()
    this.saving = this.saving.then(() => saveAtomically(this.file, entries))
    try {
      await this.saving
    } catch (err) {
      this.saving = Promise.resolve()
      lines.push('warning: could not save ' + this.file + ': ' + err.message + ' (in effect until svr stops)')
    }
    return lines
  }
}

/**
 * @param {object} options runtime options
 * @returns {string|null} the state file, null without `stateDirectory`
 */
function stateFile (options) {
  const dir = options.config.stateDirectory
  if (dir === null || dir === undefined) return null
  return path.join(path.resolve(path.dirname(options.configFile), dir), STATE_FILE)
}

function entryProblem (entry) {
  try {
    compileAddressList([entry])
    return null
  } catch (err) {
    return err.message
  }
}

async function saveAtomically (file, entries) {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o750 })
  const temp = file + '.' + process.pid + '.tmp'
  const handle = await fs.open(temp, 'w', 0o640)
  try {
    await handle.writeFile(JSON.stringify({ blocked: entries }, null, 2) + '\n')
    // On disk before the rename makes it the state.
    await handle.sync()
  } finally {
    await handle.close()
  }
  await fs.rename(temp, file)
}

module.exports = { BlockState, stateFile, STATE_FILE }
