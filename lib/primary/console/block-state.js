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
 * touched. With a `store`, the list is the fleet's (lib/store/shared-blocklist.js):
 * a change here goes to every instance, and theirs come here.
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
    // The fleet's list in the store (share), null without one.
    this.shared = null
  }

  /**
   * Keep the list with the fleet's: from now on changes go both ways.
   * @param {import('../../store/shared-blocklist').SharedBlocklist} shared
   */
  share (shared) {
    this.shared = shared
    shared.start(this.entries)
  }

  /**
   * The fleet's list changed (another instance blocked or unblocked).
   * @param {string[]} entries
   */
  adopt (entries) {
    const valid = entries.filter((entry) => entryProblem(entry) === null)
    if (valid.length === this.entries.length && valid.every((entry) => this.entries.includes(entry))) return
    const added = valid.filter((entry) => !this.entries.includes(entry))
    const removed = this.entries.filter((entry) => !valid.includes(entry))
    this.entries = valid
    this.apply(valid.slice())
    this.log.info('blocklist from the fleet: ' + [...added.map((entry) => '+' + entry), ...removed.map((entry) => '-' + entry)].join(' '))
    if (this.file !== null) this.save(valid.slice()).catch((err) => this.log.warn('could not save ' + this.file + ': ' + err.message))
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
    const changed = []
    for (const entry of args) {
      const problem = entryProblem(entry)
      if (problem !== null) lines.push('not blocked: ' + entry + ': ' + problem)
      else if (this.entries.includes(entry)) lines.push('already blocked: ' + entry)
      else {
        this.entries.push(entry)
        changed.push(entry)
        lines.push('blocked: ' + entry)
      }
    }
    return this.commit('add', changed, lines)
  }

  /**
   * @param {string[]} args entries as they were blocked
   * @returns {Promise<string[]>}
   */
  unblock (args) {
    const lines = []
    const changed = []
    for (const entry of args) {
      const index = this.entries.indexOf(entry)
      if (index === -1) {
        lines.push('not blocked from the console: ' + entry + ' (entries of "blacklist" are changed in the configuration)')
      } else {
        this.entries.splice(index, 1)
        changed.push(entry)
        lines.push('unblocked: ' + entry)
      }
    }
    return this.commit('remove', changed, lines)
  }

  async commit (op, changed, lines) {
    if (changed.length === 0) return lines
    this.apply(this.entries.slice())
    if (this.shared !== null && !(await this.shared.change(op, changed))) {
      lines.push('note: the store is not reachable: the other instances get this once it is back')
    }
    if (this.file === null) {
      if (this.shared === null) lines.push('note: "stateDirectory" is not set, so this lasts until svr stops')
      return lines
    }
    try {
      await this.save(this.entries.slice())
    } catch (err) {
      lines.push('warning: could not save ' + this.file + ': ' + err.message + (this.shared === null ? ' (in effect until svr stops)' : ''))
    }
    return lines
  }

  // Saves run one after another, so an older list never overwrites a newer one.
  save (entries) {
    const saving = this.saving.then(() => saveAtomically(this.file, entries))
    this.saving = saving.catch(() => {})
    return saving
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
