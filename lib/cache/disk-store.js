'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { createHash, randomBytes } = require('node:crypto')

// An entry file: the length of the metadata (4 bytes, big-endian), the
// metadata as JSON, then the body as it is sent.
const LENGTH_BYTES = 4
// A metadata part larger than this is a damaged file, not an entry.
const MAX_META_BYTES = 1024 * 1024
// A temporary file this old is a write that never finished (a worker
// killed in the middle), not one under way.
const STALE_TEMPORARY_MS = 60 * 1000
const SUBDIRECTORY = /^[0-9a-f]{2}$/

/**
 * The response cache's entries on disk, shared by every worker of the
 * server (and kept across reloads and restarts): one file per key, named
 * by the SHA-256 of the key in 256 subdirectories (as nginx's
 * proxy_cache `levels`), written to a temporary name and renamed into
 * place, so that a reader sees a whole entry or none, never half of one.
 */
class DiskStore {
  /**
   * @param {string} dir the cache's directory, made when needed (mode 0700)
   */
  constructor (dir) {
    this.dir = dir
  }

  /**
   * @param {string} key
   * @returns {string} the entry's file
   */
  fileOf (key) {
    const hash = createHash('sha256').update(key).digest('hex')
    return path.join(this.dir, hash.slice(0, 2), hash.slice(2))
  }

  /**
   * Store an entry, replacing the one the key had.
   * @param {string} key
   * @param {object} meta JSON-serialisable
   * @param {Buffer} body
   * @returns {Promise<number>} the bytes the entry takes on disk
   */
  async put (key, meta, body) {
    const file = this.fileOf(key)
    const metaBytes = Buffer.from(JSON.stringify({ key, meta }))
    const head = Buffer.alloc(LENGTH_BYTES)
    head.writeUInt32BE(metaBytes.length)
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    const temporary = file + '.' + randomBytes(6).toString('hex') + '.tmp'
    try {
      await fs.writeFile(temporary, Buffer.concat([head, metaBytes, body]), { mode: 0o600, flag: 'wx' })
      await fs.rename(temporary, file)
    } catch (err) {
      await fs.rm(temporary, { force: true })
      throw err
    }
    return LENGTH_BYTES + metaBytes.length + body.length
  }

  /**
   * @param {string} key
   * @returns {Promise<{meta: object, body: Buffer}|null>} null when the key
   *   has no entry, or its file is damaged (which is then removed)
   */
  async get (key) {
    const file = this.fileOf(key)
    let data
    try {
      data = await fs.readFile(file)
    } catch (err) {
      if (err.code === 'ENOENT') return null
      throw err
    }
    const entry = parseEntry(data)
    // Another key with the same hash is as good as none; a damaged file goes.
    if (entry === null) await fs.rm(file, { force: true })
    if (entry === null || entry.key !== key) return null
    return { meta: entry.meta, body: entry.body }
  }

  /**
   * Every entry on disk, least recently written first: what a primary that
   * starts (or takes another directory) finds of earlier runs, for its
   * byte budget. Damaged files and temporary ones of writes that never
   * finished are removed.
   * @returns {Promise<Array<{key: string, size: number}>>}
   */
  async scan () {
    let subdirectories
    try {
      subdirectories = await fs.readdir(this.dir)
    } catch (err) {
      if (err.code === 'ENOENT') return []
      throw err
    }
    const found = []
    for (const sub of subdirectories) {
      if (!SUBDIRECTORY.test(sub)) continue
      for (const name of await fs.readdir(path.join(this.dir, sub))) {
        const entry = await scanFile(path.join(this.dir, sub, name), name.endsWith('.tmp'))
        if (entry !== null) found.push(entry)
      }
    }
    return found.sort((a, b) => a.mtimeMs - b.mtimeMs).map(({ key, size }) => ({ key, size }))
  }

  /**
   * @param {string} key
   * @returns {Promise<boolean>} whether there was an entry
   */
  async delete (key) {
    try {
      await fs.unlink(this.fileOf(key))
      return true
    } catch (err) {
      if (err.code === 'ENOENT') return false
      throw err
    }
  }
}

/**
 * The key, size and time of one file of the store, read from its head
 * only; null for a file that is no entry (removed when damaged, or a
 * temporary one left by a write that never finished).
 * @param {string} file
 * @param {boolean} temporary
 * @returns {Promise<{key: string, size: number, mtimeMs: number}|null>}
 */
async function scanFile (file, temporary) {
  let handle
  try {
    handle = await fs.open(file, 'r')
    const { size, mtimeMs } = await handle.stat()
    if (temporary) {
      if (Date.now() - mtimeMs > STALE_TEMPORARY_MS) await fs.rm(file, { force: true })
      return null
    }
    const head = Buffer.alloc(LENGTH_BYTES)
    await handle.read(head, 0, LENGTH_BYTES, 0)
    const length = head.readUInt32BE(0)
    if (size < LENGTH_BYTES || length > MAX_META_BYTES || LENGTH_BYTES + length > size) return damaged(file)
    const metaBytes = Buffer.alloc(length)
    await handle.read(metaBytes, 0, length, LENGTH_BYTES)
    const parsed = JSON.parse(metaBytes.toString('utf8'))
    if (parsed === null || typeof parsed.key !== 'string') return damaged(file)
    return { key: parsed.key, size, mtimeMs }
  } catch (err) {
    // Gone meanwhile (replaced, evicted): nothing to count.
    if (err.code === 'ENOENT') return null
    if (err instanceof SyntaxError) return damaged(file)
    throw err
  } finally {
    if (handle !== undefined) await handle.close()
  }
}

async function damaged (file) {
  await fs.rm(file, { force: true })
  return null
}

/**
 * @param {Buffer} data an entry file
 * @returns {{key: string, meta: object, body: Buffer}|null}
 */
function parseEntry (data) {
  if (data.length < LENGTH_BYTES) return null
  const length = data.readUInt32BE(0)
  if (length > MAX_META_BYTES || LENGTH_BYTES + length > data.length) return null
  let parsed
  try {
    parsed = JSON.parse(data.subarray(LENGTH_BYTES, LENGTH_BYTES + length).toString('utf8'))
  } catch {
    return null
  }
  if (parsed === null || typeof parsed !== 'object' || typeof parsed.key !== 'string') return null
  return { key: parsed.key, meta: parsed.meta, body: data.subarray(LENGTH_BYTES + length) }
}

module.exports = { DiskStore }
