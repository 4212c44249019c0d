'use strict'

const fs = require('node:fs/promises')
const { createTimedCache } = require('./timed-cache')

// A directory where a file should be is a mistake to report, not an absence.
const MISSING = new Set(['ENOENT', 'ENOTDIR'])

/**
 * Small text files read on demand (error templates, listing headers): a file
 * is read at most once per `ttl` ms, so editing one takes effect within that
 * time without a reload and without a read on every request. The file
 * read longest ago goes first beyond `maxEntries`.
 * @param {{ttl: number, maxEntries?: number}} options
 * @returns {{get: (file: string) => Promise<string|null>, peek: (file: string) => string|null|undefined}}
 *   get: null when the file does not exist;
 *   other read errors (EACCES, EISDIR) reject, and are remembered for `ttl`
 *   ms too, so a broken file is not retried on every request
 */
function createFileCache ({ ttl, maxEntries = 256 }) {
  const entries = createTimedCache({ ttl, max: maxEntries })

  async function load (file) {
    try {
      return await fs.readFile(file, 'utf8')
    } catch (err) {
      if (MISSING.has(err.code)) return null
      throw err
    }
  }

  function get (file) {
    const entry = entries.peek(file)
    if (entry !== undefined) return entry.value
    const value = load(file)
    // content: the settled text (null: absent) for peek; undefined until then.
    const fresh = { value, content: undefined }
    entries.set(file, fresh)
    // Every caller handles the rejection; this keeps an unawaited one quiet.
    value.then((content) => { fresh.content = content }, noop)
    return value
  }

  /**
   * What get would give, without waiting: a hot file costs no promise.
   * @param {string} file
   * @returns {string|null|undefined} undefined unless read (or found absent)
   *   less than `ttl` ms ago; a read error is get's to report
   */
  function peek (file) {
    const entry = entries.peek(file)
    return entry === undefined ? undefined : entry.content
  }

  return { get, peek }
}

function noop () {}

module.exports = { createFileCache }
