'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')

// As the storage directory's other files (lib/acme/storage.js).
const KEY_MODE = 0o600
// A takeover takes milliseconds; a marker this old was left by a crash.
const MARKER_STALE_MS = 30000

/**
 * An order lock in the shared storage directory, so that instances behind
 * one load balancer order a name once between them (the pattern of Caddy's
 * file storage): a file made with O_EXCL holding its owner and an expiry.
 * The holder pushes the expiry on while it works; a holder that crashed
 * stops doing so, and once its expiry has passed the next instance removes
 * the file and takes the lock.
 */
class OrderLock {
  /**
   * @param {string} file the lock file
   * @param {string} owner who we are (host, pid, a random part)
   * @param {number} ttl ms a lock lasts unless refreshed
   */
  constructor (file, owner, ttl) {
    this.file = file
    this.owner = owner
    this.ttl = ttl
    this.refresher = null
  }

  /**
   * @returns {Promise<{acquired: true}|{acquired: false, holder: {owner: string, expires: number}}>}
   */
  async acquire () {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.create()) {
        // A third of the lifetime: two refreshes may fail before it expires.
        this.refresher = setInterval(() => this.refresh(), Math.max(1000, Math.floor(this.ttl / 3)))
        this.refresher.unref()
        return { acquired: true }
      }
      const holder = await this.holder()
      if (holder === null) continue
      if (holder.expires > Date.now()) return { acquired: false, holder }
      await this.removeStale(holder)
    }
    return { acquired: false, holder: await this.holder() || { owner: 'unknown', expires: 0 } }
  }

  // A file without a readable lock in it is being written right now, or was
  // left half-written by a crash: it counts as held until ttl after it was
  // last written.
  async holder () {
    const holder = await readLock(this.file)
    if (holder === null || holder.owner !== null) return holder
    const stat = await fs.stat(this.file).catch(() => null)
    return stat === null ? null : { owner: 'unknown (unreadable lock file)', expires: stat.mtimeMs + this.ttl }
  }

  async create () {
    try {
      await fs.writeFile(this.file, this.content(), { flag: 'wx', mode: KEY_MODE })
      return true
    } catch (err) {
      if (err.code === 'EEXIST') return false
      throw err
    }
  }

  content () {
    return JSON.stringify({ owner: this.owner, expires: Date.now() + this.ttl }) + '\n'
  }

  // Of the instances that find the same stale lock, only the one that
  // makes the takeover marker (O_EXCL) removes it, and only if the file
  // still holds what was found: a lock another instance took meanwhile is
  // never removed. (Renaming the lock aside, as this did before, could move
  // a fresh lock away while a third instance created its own: two holders.)
  // A marker left by an instance that died while taking over is removed
  // once it is older than MARKER_STALE_MS.
  async removeStale (seen) {
    const marker = this.file + '.takeover'
    try {
      await fs.writeFile(marker, this.owner, { flag: 'wx', mode: KEY_MODE })
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
      const stat = await fs.stat(marker).catch(() => null)
      if (stat !== null && Date.now() - stat.mtimeMs > MARKER_STALE_MS) await fs.rm(marker, { force: true })
      return
    }
    try {
      const current = await this.holder()
      if (current !== null && current.owner === seen.owner && current.expires === seen.expires) await fs.rm(this.file, { force: true })
    } finally {
      await fs.rm(marker, { force: true })
    }
  }

  async refresh () {
    const current = await readLock(this.file).catch(() => null)
    if (current === null || current.owner !== this.owner) return
    const temp = this.file + '.' + crypto.randomBytes(6).toString('hex') + '.tmp'
    try {
      await fs.writeFile(temp, this.content(), { flag: 'wx', mode: KEY_MODE })
      await fs.rename(temp, this.file)
    } catch {
      await fs.rm(temp, { force: true }).catch(() => {})
    }
  }

  /**
   * Remove the lock if it is still ours.
   * @returns {Promise<void>}
   */
  async release () {
    clearInterval(this.refresher)
    this.refresher = null
    const current = await readLock(this.file).catch(() => null)
    if (current !== null && current.owner === this.owner) await fs.rm(this.file, { force: true })
  }
}

/**
 * @param {string} file
 * @returns {Promise<{owner: string|null, expires: number}|null>} null when missing; owner null when
 *   the file holds no readable lock
 */
async function readLock (file) {
  let text
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  try {
    const { owner, expires } = JSON.parse(text)
    if (typeof owner === 'string' && Number.isFinite(expires)) return { owner, expires }
  } catch {
    // Empty or half-written: see OrderLock#holder.
  }
  return { owner: null, expires: 0 }
}

module.exports = { OrderLock, readLock }
