'use strict'

const fs = require('node:fs/promises')
const { performance } = require('node:perf_hooks')
const { createTimedCache } = require('../util/timed-cache')

const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK || 0)
// Entries at most, whatever their bytes: many empty files cost little each.
const MAX_ENTRIES = 16384

/**
 * Small static files held in memory, with the stats of the open file they
 * were read from, so that bytes, length and validators always describe one
 * version of the file. An entry is served while the request's stats (ino,
 * size, mtime, ctime) still match it and for `ttl` ms after it was last
 * checked against the symlink policy; a changed file is read again. Bounded
 * by `maxBytes` of bodies and their coded variants in all, the entry used
 * longest ago out first, and by as many bytes again of reads in progress:
 * beyond that a request is left to stream the file (see `load`). `maxBytes`
 * 0 holds nothing.
 * @param {{maxFileBytes: number, maxBytes: number, ttl: number, clock?: {now: () => number}}} options
 */
function createBodyCache ({ maxFileBytes, maxBytes, ttl, clock = performance }) {
  // Entries do not expire: an old one is renewed by `load` without a read.
  const entries = createTimedCache({ ttl: Infinity, max: maxBytes > 0 ? MAX_ENTRIES : 0, maxSize: maxBytes, sizeOf })
  const loading = new Map()
  let loadingBytes = 0
  const largest = Math.min(maxFileBytes, maxBytes)

  /**
   * @param {import('node:fs').Stats} stat
   * @returns {boolean} whether a file of this size may be held
   */
  function fits (stat) {
    return stat.size <= largest && maxBytes > 0
  }

  /**
   * @param {string} file
   * @param {import('node:fs').Stats} stat the request's stats of it
   * @returns {object | null} the entry ({body, stat, …}) while it matches the
   *   stats and was checked less than `ttl` ms ago
   */
  function peek (file, stat) {
    const entry = entries.get(file)
    if (entry === undefined) return null
    if (clock.now() - entry.checked >= ttl || !sameFile(entry.stat, stat)) return null
    return entry
  }

  /**
   * The file's body, read once for concurrent callers and kept. The caller
   * has just taken `stat` and checked the symlink policy on that file: a
   * body read from another file (the path was replaced meanwhile) is not
   * kept, and an entry that still matches `stat` is renewed without a read.
   * @param {string} file
   * @param {import('node:fs').Stats} stat fresh stats of the file
   * @returns {Promise<object | null>} null when it is no longer that regular
   *   file small enough to hold, or when reads in progress already hold `maxBytes`
   */
  function load (file, stat) {
    const entry = entries.get(file)
    if (entry !== undefined && sameFile(entry.stat, stat)) {
      entry.checked = clock.now()
      return Promise.resolve(entry)
    }
    let pending = loading.get(file)
    if (pending !== undefined) return pending.then((loaded) => loaded !== null && sameFile(loaded.stat, stat) ? loaded : null)
    if (!fits(stat)) return Promise.resolve(null)
    // A crowd asking for many different files at once must not buffer
    // them all: beyond the budget, they are streamed.
    if (loadingBytes + stat.size > maxBytes) return Promise.resolve(null)
    const size = stat.size
    loadingBytes += size
    pending = readWhole(file, largest, stat).then((loaded) => {
      loading.delete(file)
      loadingBytes -= size
      if (loaded !== null) {
        loaded.checked = clock.now()
        entries.set(file, loaded)
      }
      return loaded
    }, (err) => {
      loading.delete(file)
      loadingBytes -= size
      throw err
    })
    loading.set(file, pending)
    return pending
  }

  return {
    fits,
    peek,
    load,
    coded: (file, entry, coding) => coded(entries, file, entry, coding),
    get size () { return entries.size },
    get bytes () { return entries.calculatedSize || 0 },
    get loadingBytes () { return loadingBytes }
  }
}

/**
 * The held body in a content coding, made once per entry (concurrent
 * callers share the work) and held with it, within the same budget.
 * @param {object} entries the cache holding it
 * @param {string} file
 * @param {object} entry from peek or load
 * @param {{name: string, encode: (body: Buffer) => Promise<Buffer>}} coding
 * @returns {Promise<Buffer>}
 */
function coded (entries, file, entry, coding) {
  let pending = entry.coding[coding.name]
  if (pending === undefined) {
    pending = coding.encode(entry.body).then((body) => {
      entry.variants[coding.name] = body
      addVariant(entries, file, entry, body.length)
      return body
    }, (err) => {
      delete entry.coding[coding.name]
      throw err
    })
    entry.coding[coding.name] = pending
  }
  return pending
}

// Counted only while the entry is the one held for the file: set again,
// it is measured anew, and left out if it no longer fits at all.
function addVariant (entries, file, entry, length) {
  entry.bytes += length
  if (entries.get(file) !== entry) return
  entries.delete(file)
  entries.set(file, entry)
}

// lru-cache takes positive sizes only: an empty file counts as one byte.
function sizeOf (entry) {
  return entry.bytes || 1
}

// ctime too: a file rewritten in place, or a new file on a reused inode,
// may keep size and mtime (cp -p, builds with one fixed mtime), but every
// change of content or metadata sets ctime, which nobody can set back.
function sameFile (a, b) {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.dev === b.dev
}

async function readWhole (file, maxFileBytes, expected) {
  // Non-blocking: a FIFO put in the file's place would otherwise hold a
  // thread of libuv's pool until something writes to it.
  const handle = await fs.open(file, OPEN_FLAGS)
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || stat.size > maxFileBytes) return null
    // Not the file the caller judged: replaced between its stat and this open.
    if (stat.ino !== expected.ino || stat.dev !== expected.dev) return null
    const body = Buffer.allocUnsafe(stat.size)
    let offset = 0
    while (offset < body.length) {
      const { bytesRead } = await handle.read(body, offset, body.length - offset, offset)
      if (bytesRead === 0) break
      offset += bytesRead
    }
    // Cut short while being rewritten: not a version worth keeping.
    if (offset !== body.length) return null
    return newEntry(body, stat)
  } finally {
    await handle.close()
  }
}

// headers: the writer's header values, computed once; variants: coded
// bodies ready to send, by coding; coding: the promises making them;
// bytes: the body and its variants; negotiatedPath/Type: the compression
// verdict, by URL path.
function newEntry (body, stat) {
  return {
    body,
    stat,
    checked: 0,
    headers: null,
    variants: {},
    coding: {},
    bytes: body.length,
    negotiatedPath: null,
    negotiatedType: null
  }
}

module.exports = { createBodyCache }
