'use strict'

const fs = require('node:fs/promises')

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR'])

/**
 * Small text files read on demand (error templates, listing headers): a file
 * is read at most once per `ttl` ms, so editing one takes effect within that
 * time without a reload and without a read on every request.
 * @param {{ttl?: number, maxEntries?: number}} [options]
 * @returns {{get: (file: string) => Promise<string|null>}} null when the file does not exist;
 *   other read errors reject (and are not cached)
 */
function createFileCache ({ ttl = 1000, maxEntries = 256 } = {}) {
  const entries = new Map()

  async function load (file) {
    try {
      return await fs.readFile(file, 'utf8')
    } catch (err) {
      if (MISSING.has(err.code)) return null
      throw err
    }
  }

  function get (file) {
    const now = Date.now()
    const entry = entries.get(file)
    if (entry !== undefined && now - entry.time < ttl) return entry.value
    const value = load(file)
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value)
    entries.set(file, { time: now, value })
    value.catch(() => entries.delete(file))
    return value
  }

  return { get }
}

module.exports = { createFileCache }
