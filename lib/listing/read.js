'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')

// Enough parallel stats to keep libuv's thread pool busy without queueing
// thousands of requests at once (which would starve other file I/O).
const STAT_CONCURRENCY = 16

/**
 * @typedef {object} ListingEntry
 * @property {string} name
 * @property {string} kind 'dir', 'file', 'block', 'char', 'fifo', 'socket' or 'broken'
 * @property {number} size bytes; -1 when it does not apply
 * @property {number} mtimeMs -1 when unknown
 */

/**
 * Read a directory for its listing: every entry that does not start with
 * "." and that `hidden` lets through, stat'ed (following symbolic links)
 * with a bounded concurrency. A link whose target is missing or unreadable
 * is an entry of kind 'broken', never an error.
 * @param {string} dir absolute path
 * @param {(name: string) => boolean} [hidden] names never listed
 * @returns {Promise<ListingEntry[]>} in directory order
 */
async function readEntries (dir, hidden = neverHidden) {
  const dirents = await fs.readdir(dir, { withFileTypes: true })
  const entries = []
  for (const dirent of dirents) {
    const name = dirent.name
    if (name.charCodeAt(0) === 46 /* . */ || hidden(name)) continue
    entries.push({ name, kind: 'file', size: -1, mtimeMs: -1 })
  }
  let next = 0
  async function statNext () {
    while (next < entries.length) {
      const entry = entries[next++]
      await statEntry(dir, entry)
    }
  }
  const runners = []
  for (let i = 0; i < STAT_CONCURRENCY && i < entries.length; i++) runners.push(statNext())
  await Promise.all(runners)
  return entries
}

function neverHidden () {
  return false
}

async function statEntry (dir, entry) {
  let stats
  try {
    stats = await fs.stat(path.join(dir, entry.name))
  } catch {
    // Gone since readdir, a dangling link, a link loop or no permission:
    // all the same to a reader of the listing.
    entry.kind = 'broken'
    return
  }
  entry.kind = kindOf(stats)
  entry.size = entry.kind === 'file' ? stats.size : -1
  entry.mtimeMs = stats.mtimeMs
}

function kindOf (stats) {
  if (stats.isFile()) return 'file'
  if (stats.isDirectory()) return 'dir'
  if (stats.isBlockDevice()) return 'block'
  if (stats.isCharacterDevice()) return 'char'
  if (stats.isFIFO()) return 'fifo'
  if (stats.isSocket()) return 'socket'
  return 'file'
}

/**
 * Directories first, then everything else; each group by name, ignoring
 * case (String#toLowerCase does not depend on the locale) with code-unit
 * order breaking ties, so the order is the same on every machine.
 * @param {ListingEntry[]} entries sorted in place
 * @returns {ListingEntry[]}
 */
function sortEntries (entries) {
  const keyed = entries.map((entry) => ({ entry, dir: entry.kind === 'dir', key: entry.name.toLowerCase() }))
  keyed.sort(compareKeyed)
  for (let i = 0; i < keyed.length; i++) entries[i] = keyed[i].entry
  return entries
}

function compareKeyed (a, b) {
  if (a.dir !== b.dir) return a.dir ? -1 : 1
  if (a.key !== b.key) return a.key < b.key ? -1 : 1
  const x = a.entry.name
  const y = b.entry.name
  return x < y ? -1 : x > y ? 1 : 0
}

module.exports = { readEntries, sortEntries, STAT_CONCURRENCY }
