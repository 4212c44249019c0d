'use strict'

const fs = require('node:fs/promises')

/**
 * Small static files held in memory per process, with the stats of the
 * open file they were read from, so that bytes, length and validators
 * always describe one version of the file. An entry is served while the
 * request's stats (ino, size, mtime) still match it and for `ttl` ms after
 * it was last checked against the symlink policy; a changed file is read
 * again. Bounded by `maxBytes` of bodies in all, oldest entries out first.
 * @param {{maxFileBytes?: number, maxBytes?: number, ttl?: number, now?: () => number}} [options]
 */
function createFileBodyCache ({ maxFileBytes = 64 * 1024, maxBytes = 8 * 1024 * 1024, ttl = 1000, now = Date.now } = {}) {
  const entries = new Map()
  const loading = new Map()
  let bytes = 0

  /**
   * @param {import('node:fs').Stats} stat
   * @returns {boolean} whether a file of this size may be held
   */
  function fits (stat) {
    return stat.size <= maxFileBytes
  }

  /**
   * @param {string} file
   * @param {import('node:fs').Stats} stat the request's stats of it
   * @returns {{body: Buffer, stat: import('node:fs').Stats} | null} the entry
   *   while it matches the stats and was checked less than `ttl` ms ago
   */
  function peek (file, stat) {
    const entry = entries.get(file)
    if (entry === undefined) return null
    if (now() - entry.checked >= ttl || !sameFile(entry.stat, stat)) return null
    return entry
  }

  /**
   * Read the file (once for concurrent callers) and keep it. The caller has
   * checked the symlink policy just before.
   * @param {string} file
   * @returns {Promise<{body: Buffer, stat: import('node:fs').Stats} | null>} null
   *   when it is no longer a regular file small enough to hold
   */
  function load (file) {
    let pending = loading.get(file)
    if (pending === undefined) {
      pending = readWhole(file, maxFileBytes).then((entry) => {
        loading.delete(file)
        if (entry !== null) store(file, entry)
        return entry
      }, (err) => {
        loading.delete(file)
        throw err
      })
      loading.set(file, pending)
    }
    return pending
  }

  function store (file, entry) {
    entry.checked = now()
    drop(file)
    while (bytes + entry.body.length > maxBytes && entries.size !== 0) drop(entries.keys().next().value)
    if (entry.body.length > maxBytes) return
    entries.set(file, entry)
    bytes += entry.body.length
  }

  function drop (file) {
    const entry = entries.get(file)
    if (entry === undefined) return
    entries.delete(file)
    bytes -= entry.body.length
  }

  return {
    fits,
    peek,
    load,
    get size () { return entries.size },
    get bytes () { return bytes }
  }
}

function sameFile (a, b) {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.dev === b.dev
}

async function readWhole (file, maxFileBytes) {
  const handle = await fs.open(file, 'r')
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || stat.size > maxFileBytes) return null
    const body = Buffer.allocUnsafe(stat.size)
    let offset = 0
    while (offset < body.length) {
      const { bytesRead } = await handle.read(body, offset, body.length - offset, offset)
      if (bytesRead === 0) break
      offset += bytesRead
    }
    // Cut short while being rewritten: not a version worth keeping.
    if (offset !== body.length) return null
    // type, etag and lastModified: header values the caller computes once.
    return { body, stat, checked: 0, type: null, etag: null, lastModified: null }
  } finally {
    await handle.close()
  }
}

module.exports = { createFileBodyCache }
