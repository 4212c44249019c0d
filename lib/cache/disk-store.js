'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const { createHash, randomBytes } = require('node:crypto')

// An entry file: the length of the metadata (4 bytes, big-endian), the
// metadata as JSON, then the body as it is sent.
const LENGTH_BYTES = 4
// A metadata part larger than this is a damaged file, not an entry.
const MAX_META_BYTES = 1024 * 1024

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
