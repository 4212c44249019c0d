'use strict'

const fs = require('node:fs')
const path = require('node:path')

// The site head and foot are kept in memory and refreshed in the background,
// so that the synchronous SVR.JS API (`head`, `foot`, `responseEnd`) has them
// without a file read per request (SVR.JS read them synchronously on every
// request). An edit shows within this interval.
const REFRESH_MS = 2000
const HEAD_FILES = ['.head', 'head.html']
const FOOT_FILES = ['.foot', 'foot.html']

/**
 * The SVR.JS site head (`.head`, else `head.html`) and foot (`.foot`, else
 * `foot.html`) of each webroot a worker serves: read once synchronously at
 * boot, then refreshed asynchronously. The worker's runtime holds one;
 * close() stops the refreshing when the worker is done.
 */
class SiteChromes {
  /**
   * @param {object} log
   */
  constructor (log) {
    this.log = log
    this.byRoot = new Map()
    this.timers = []
  }

  /**
   * @param {string} root absolute webroot
   * @returns {{head: string, foot: string}} kept up to date
   */
  get (root) {
    const known = this.byRoot.get(root)
    if (known !== undefined) return known
    const { log } = this
    const chrome = {
      head: readFirstSync(root, HEAD_FILES, log),
      foot: readFirstSync(root, FOOT_FILES, log)
    }
    async function refresh () {
      chrome.head = await readFirst(root, HEAD_FILES, log)
      chrome.foot = await readFirst(root, FOOT_FILES, log)
    }
    this.timers.push(setInterval(refresh, REFRESH_MS).unref())
    this.byRoot.set(root, chrome)
    return chrome
  }

  close () {
    for (const timer of this.timers) clearInterval(timer)
    this.timers = []
    this.byRoot.clear()
  }
}

function readFirstSync (root, names, log) {
  for (const name of names) {
    try {
      return fs.readFileSync(path.join(root, name), 'utf8')
    } catch (err) {
      if (!isMissing(err)) return unreadable(name, err, log)
    }
  }
  return ''
}

async function readFirst (root, names, log) {
  for (const name of names) {
    try {
      return await fs.promises.readFile(path.join(root, name), 'utf8')
    } catch (err) {
      if (!isMissing(err)) return unreadable(name, err, log)
    }
  }
  return ''
}

function isMissing (err) {
  return err.code === 'ENOENT' || err.code === 'ENOTDIR'
}

function unreadable (name, err, log) {
  log.warn('cannot read the site ' + name + ': ' + err.message)
  return ''
}

module.exports = { SiteChromes }
