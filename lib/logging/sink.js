'use strict'

const fs = require('node:fs')

// Several processes append to the same file or pipe. A write of whole lines
// lands in one piece: in a file opened for appending, any single write()
// does; in a pipe, one of at most PIPE_BUF (4096) bytes does.
const FILE_BATCH_BYTES = 65536
const PIPE_BATCH_BYTES = 4096
// When the disk or the journal cannot keep up, lines wait in memory up to
// this much; beyond it they are dropped (and counted) rather than letting a
// stuck log take the worker down.
const MAX_PENDING_BYTES = 16 * 1024 * 1024
const RETRY_MS = 20

/**
 * A buffered, append-only line writer on a file descriptor. A file can be
 * reopened (after logrotate renamed it) without losing or splitting a line.
 *
 * To a regular file, the lines of one event-loop turn go out together in
 * one `write()` at the end of the turn, made on the event loop's thread:
 * appending to a file copies into the page cache and takes a few µs, while
 * handing the write to libuv's thread pool wakes a pool thread and then the
 * loop again for every batch, which on a busy two-core machine cost about a
 * sixth of a small answer's throughput. nginx writes its access log the
 * same way. To a pipe or socket (the journal), whose reader can stall,
 * writes stay off the thread: there is never more than one in flight, so
 * lines keep their order.
 */
class LineSink {
  /**
   * @param {{file?: string, fd?: number, flushDelay?: number, onError?: (err: Error) => void}} target
   *   a file to open with O_APPEND, or an inherited descriptor (1 or 2);
   *   flushDelay: ms a line may wait for others to share its write (the
   *   config's logFlushDelay), so that a busy worker writes a few large
   *   batches a second instead of one small one per response; a crash still
   *   writes them (flushSync), only SIGKILL loses them. 0 (the default
   *   here): each line goes out at once, or with the next write when one is
   *   in flight
   */
  constructor (target) {
    this.file = target.file === undefined ? null : target.file
    this.fd = target.fd === undefined ? -1 : target.fd
    this.batchBytes = this.file === null ? PIPE_BATCH_BYTES : FILE_BATCH_BYTES
    this.onError = target.onError || noop
    this.flushDelay = target.flushDelay || 0
    // Known once open() has looked at the descriptor.
    this.regularFile = false
    this.pending = []
    this.pendingBytes = 0
    // Lines queued without the caller vouching that they are ASCII; a
    // batch is written as latin1 only while there is none.
    this.wideLines = 0
    this.writing = false
    this.scheduled = false
    this.retired = []
    this.dropped = 0
    this.lastErrorCode = null
    this.idleWaiters = []
    this.flushNow = () => {
      this.scheduled = false
      this.flush()
    }
    this.flushTurn = () => {
      this.scheduled = false
      this.writeQueued()
    }
  }

  /**
   * Open the file; of a descriptor, learn whether it is a regular file.
   * @returns {Promise<void>}
   */
  async open () {
    if (this.file !== null) this.fd = await openAppend(this.file)
    // A named file may be a FIFO, and standard output may be redirected to a file.
    this.regularFile = await isRegularFile(this.fd)
    this.batchBytes = this.regularFile ? FILE_BATCH_BYTES : PIPE_BATCH_BYTES
  }

  /**
   * Queue one line (with its newline).
   * @param {string} line
   * @param {boolean} [ascii] the caller vouches that the line is all ASCII
   *   (the combined access log's are). A batch of only such lines is written
   *   as latin1, the same bytes without the passes that encode it as UTF-8
   *   and count its UTF-8 bytes.
   */
  write (line, ascii = false) {
    if (this.pendingBytes + line.length > MAX_PENDING_BYTES) {
      this.dropped++
      return
    }
    this.pending.push(line)
    this.pendingBytes += line.length
    if (!ascii) this.wideLines++
    if (this.writing) return
    if (this.regularFile && this.flushDelay === 0) {
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.flushTurn)
      }
    } else if (this.flushDelay === 0 || this.pendingBytes >= this.batchBytes) {
      this.flush()
    } else if (!this.scheduled) {
      this.scheduled = true
      setTimeout(this.flushNow, this.flushDelay)
    }
  }

  flush () {
    if (this.writing || this.pending.length === 0 || this.fd === -1) {
      if (!this.writing && this.pending.length === 0) this.settleIdle()
      return
    }
    if (this.regularFile) {
      this.writeQueued()
      return
    }
    const encoding = this.batchEncoding()
    const text = this.takeBatch()
    this.writing = true
    this.writeBuffer(Buffer.from(text, encoding))
  }

  // latin1 while every queued line is vouched for as ASCII, so any batch is.
  batchEncoding () {
    return this.wideLines === 0 ? 'latin1' : 'utf8'
  }

  // Whole lines up to the batch size; a single longer line goes alone.
  takeBatch () {
    let count = 0
    let bytes = 0
    while (count < this.pending.length) {
      const size = this.pending[count].length
      if (count !== 0 && bytes + size > this.batchBytes) break
      bytes += size
      count++
    }
    const all = count === this.pending.length
    const lines = all ? this.pending : this.pending.slice(0, count)
    // Which lines a part of the queue took is not known: the count stays.
    if (all) this.wideLines = 0
    this.pending = all ? [] : this.pending.slice(count)
    this.pendingBytes -= bytes
    return count === 1 ? lines[0] : lines.join('')
  }

  // A regular file: everything queued, batch by batch, on this thread.
  writeQueued () {
    while (this.pending.length !== 0 && this.fd !== -1) {
      const encoding = this.batchEncoding()
      try {
        writeText(this.fd, this.takeBatch(), encoding)
      } catch (err) {
        this.report(err)
      }
    }
    if (this.dropped !== 0) this.reportDropped()
    if (this.pending.length === 0) this.settleIdle()
  }

  // The rest of a partly written batch goes to the same fd, even when a
  // reopen has switched files meanwhile, so no line is split between two
  // files; the old fd is closed only once the write is over.
  writeBuffer (buffer, fd = this.fd) {
    fs.write(fd, buffer, 0, buffer.length, null, (err, written) => {
      if (err && err.code === 'EAGAIN') {
        setTimeout(() => this.writeBuffer(buffer, fd), RETRY_MS).unref()
        return
      }
      if (err) {
        this.report(err)
      } else if (written < buffer.length) {
        this.writeBuffer(buffer.subarray(written), fd)
        return
      }
      this.writing = false
      this.closeRetired()
      if (this.dropped !== 0) this.reportDropped()
      this.flush()
    })
  }

  report (err) {
    // One message per kind of failure, not one per batch.
    if (err.code === this.lastErrorCode) return
    this.lastErrorCode = err.code
    this.onError(err)
  }

  reportDropped () {
    const err = new Error(this.dropped + ' log line(s) dropped: the log destination is not keeping up')
    err.code = 'SVR_LOG_DROPPED'
    this.dropped = 0
    this.lastErrorCode = null
    this.onError(err)
  }

  /**
   * Open the file again under its name (logrotate has renamed the old one)
   * and switch to it. A write in flight finishes in the old file, which is
   * closed after it; every later line goes to the new one.
   * @returns {Promise<void>}
   */
  async reopen () {
    if (this.file === null) return
    const fd = await openAppend(this.file)
    const regularFile = await isRegularFile(fd)
    if (this.fd !== -1) this.retired.push(this.fd)
    this.fd = fd
    this.regularFile = regularFile
    this.batchBytes = regularFile ? FILE_BATCH_BYTES : PIPE_BATCH_BYTES
    this.lastErrorCode = null
    if (!this.writing) this.closeRetired()
    this.flush()
  }

  closeRetired () {
    for (const fd of this.retired) fs.close(fd, noop)
    this.retired.length = 0
  }

  settleIdle () {
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const resolve of waiters) resolve()
  }

  /**
   * @returns {Promise<void>} settles once every queued line is written
   */
  flushed () {
    if (!this.writing && this.pending.length === 0) return Promise.resolve()
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve)
      // Whoever waits does not wait for the batching delay as well.
      if (!this.writing) this.flush()
    })
  }

  /**
   * Last resort when the process exits at once (a crash): write what is
   * still queued synchronously.
   */
  flushSync () {
    if (this.pending.length === 0 || this.fd === -1) return
    const text = this.pending.join('')
    this.pending = []
    this.pendingBytes = 0
    this.wideLines = 0
    try {
      fs.writeSync(this.fd, text)
    } catch {
      // Exiting anyway; there is nobody left to tell.
    }
  }

  /**
   * Close the file after the queued lines are written.
   * @returns {Promise<void>}
   */
  async close () {
    await this.flushed()
    if (this.file !== null && this.fd !== -1) {
      const fd = this.fd
      this.fd = -1
      await new Promise((resolve) => fs.close(fd, () => resolve()))
    }
  }
}

function noop () {}

// Encoded by the write itself, with no Buffer made for it; only a short
// write (a full disk) needs the bytes, to go on after the written ones.
// latin1: text of ASCII only, one byte per character.
function writeText (fd, text, encoding) {
  const written = fs.writeSync(fd, text, null, encoding)
  if (written === (encoding === 'latin1' ? text.length : Buffer.byteLength(text))) return
  const buffer = Buffer.from(text, encoding)
  let offset = written
  while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset)
}

function isRegularFile (fd) {
  return new Promise((resolve) => {
    fs.fstat(fd, (err, stat) => resolve(!err && stat.isFile()))
  })
}

function openAppend (file) {
  return new Promise((resolve, reject) => {
    fs.open(file, 'a', 0o640, (err, fd) => err ? reject(err) : resolve(fd))
  })
}

module.exports = { LineSink, MAX_PENDING_BYTES }
