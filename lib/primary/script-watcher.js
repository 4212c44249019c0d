'use strict'

const fs = require('node:fs')

/**
 * Watch serverSideScript.js for edits (watchServerSideScript) by polling
 * its modification time and size.
 *
 * fs.watchFile is not used: it reports a change against its own first
 * look, which it takes later, from the thread pool. An edit made between
 * the workers loading the script and that first look (a busy machine, or an
 * editor saving right after a start) became its starting point and was
 * never rolled out. Here the starting point is the script as the workers
 * loaded it, read once per watch (at start and after a reload), and every
 * later look is compared with it.
 */
class ScriptWatcher {
  /**
   * @param {string} file
   * @param {number} interval ms between two looks
   * @param {() => void} onChange called once per edit seen
   */
  constructor (file, interval, onChange) {
    this.file = file
    this.onChange = onChange
    this.seen = signature(fs.statSync(file, { throwIfNoEntry: false }))
    this.looking = false
    this.timer = setInterval(() => this.look(), interval).unref()
  }

  async look () {
    // A stat slower than the interval (a hung network mount) is not piled on.
    if (this.looking) return
    this.looking = true
    let stats
    try {
      stats = await fs.promises.stat(this.file)
    } catch {
      stats = undefined
    }
    this.looking = false
    if (this.timer === null) return
    const now = signature(stats)
    if (now === this.seen) return
    this.seen = now
    this.onChange()
  }

  stop () {
    clearInterval(this.timer)
    this.timer = null
  }
}

// '' for a missing file: removing the script is a change, as is putting it back.
function signature (stats) {
  return stats === undefined ? '' : stats.mtimeMs + ' ' + stats.size
}

module.exports = { ScriptWatcher }
