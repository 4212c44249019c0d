'use strict'

const fs = require('node:fs/promises')
const { waitUntil } = require('./wait')

const QUOTED = '"((?:[^"\\\\]|\\\\.)*)"'
// host ident user [time] "request" status bytes "referer" "user-agent" "request-id" [aborted]
const COMBINED = new RegExp('^(\\S+) (\\S+) (\\S+) \\[(\\d{2}/[A-Z][a-z]{2}/\\d{4}:\\d{2}:\\d{2}:\\d{2} [+-]\\d{4})\\] ' +
  QUOTED + ' (\\d{3}) (\\d+|-) ' + QUOTED + ' ' + QUOTED + ' ' + QUOTED + '( aborted)?$')
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/**
 * Undo the access log's escaping: \xHH back to the byte, as a latin1 string
 * (the form Node gives request bytes in).
 * @param {string} value
 * @returns {string}
 */
function unescapeLogValue (value) {
  return value.replace(/\\x([0-9A-F]{2})/g, (match, hex) => String.fromCharCode(parseInt(hex, 16)))
}

/**
 * @param {string} line one line without its newline
 * @returns {object|null} the fields, unescaped, or null when the line is not Combined Log Format
 */
function parseCombined (line) {
  if (!PRINTABLE_ASCII.test(line)) return null
  const m = COMBINED.exec(line)
  if (m === null) return null
  // Inside quotes only \xHH escapes may appear: a lone backslash would mean
  // a field that could end early.
  for (const field of [m[5], m[8], m[9], m[10]]) {
    if (/\\(?!x[0-9A-F]{2})/.test(field)) return null
  }
  return {
    address: m[1],
    user: m[3],
    time: m[4],
    request: unescapeLogValue(m[5]),
    status: Number(m[6]),
    bytes: m[7] === '-' ? 0 : Number(m[7]),
    referer: unescapeLogValue(m[8]),
    userAgent: unescapeLogValue(m[9]),
    requestId: unescapeLogValue(m[10]),
    aborted: m[11] !== undefined
  }
}

/**
 * Wait until a file holds at least `count` complete lines.
 * @param {string} file
 * @param {number} count
 * @param {number} [timeout]
 * @returns {Promise<string[]>} the lines, without newlines
 */
async function waitForLines (file, count, timeout = 10000) {
  const deadline = Date.now() + timeout
  for (;;) {
    const lines = await readLines(file)
    if (lines.length >= count) return lines
    if (Date.now() > deadline) throw new Error(file + ': ' + lines.length + ' of ' + count + ' lines after ' + timeout + ' ms')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * @param {string} file
 * @returns {Promise<string[]>} complete lines; [] when the file does not exist
 */
async function readLines (file) {
  let text
  try {
    text = await fs.readFile(file, 'latin1')
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
  const end = text.lastIndexOf('\n')
  return end === -1 ? [] : text.slice(0, end).split('\n')
}

/**
 * Linux: whether one of the processes still has a descriptor on the file
 * (a log rotated away is closed once every process has reopened its log).
 * @param {number[]} pids
 * @param {string} file
 * @returns {Promise<boolean>}
 */
async function holdsOpen (pids, file) {
  for (const pid of pids) {
    let fds
    try {
      fds = await fs.readdir('/proc/' + pid + '/fd')
    } catch {
      continue
    }
    for (const fd of fds) {
      const target = await fs.readlink('/proc/' + pid + '/fd/' + fd).catch(() => '')
      if (target === file) return true
    }
  }
  return false
}

module.exports = { parseCombined, unescapeLogValue, waitForLines, readLines, holdsOpen, waitUntil, COMBINED }
