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

const byRoot = new Map()

/**
 * The SVR.JS site head (`.head`, else `head.html`) and foot (`.foot`, else
 * `foot.html`) of the webroot. Read once synchronously at boot, then
 * refreshed asynchronously.
 * @param {string} root absolute webroot
 * @param {object} log
 * @returns {{head: string, foot: string}}
 */
function createSiteChrome (root, log) {
  // A reload in single-threaded mode builds a new pipeline: it shares the
  // refresher of its webroot instead of starting one more timer.
  const known = byRoot.get(root)
  if (known !== undefined) return known
  const chrome = {
    head: readFirstSync(root, HEAD_FILES, log),
    foot: readFirstSync(root, FOOT_FILES, log)
  }
  async function refresh () {
    chrome.head = await readFirst(root, HEAD_FILES, log)
    chrome.foot = await readFirst(root, FOOT_FILES, log)
  }
  setInterval(refresh, REFRESH_MS).unref()
  byRoot.set(root, chrome)
  return chrome
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

module.exports = { createSiteChrome }
