'use strict'

// What SIGUSR1 does to a log file, held at the sink itself: reopening
// switches to the file now under the name and closes the descriptor of the
// one logrotate renamed away, at once or, with a write in flight, right after
// that write. A descriptor left open keeps a rotated file's disk space
// allocated for as long as the worker lives, one more with every rotation.
// Linux: the descriptors are read from /proc/self/fd.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs/promises')
const fsSync = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LineSink } = require('../../lib/logging/sink')

// A bound for waiting on what the thread pool does (fs.close), not a claim
// about how long it takes.
const WAIT_LIMIT_MS = 10000

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-sink-fds-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

/**
 * @param {string} file
 * @returns {number[]} this process's descriptors open on the file, ascending
 */
function descriptorsOn (file) {
  const found = []
  for (const entry of fsSync.readdirSync('/proc/self/fd')) {
    let target
    try {
      target = fsSync.readlinkSync('/proc/self/fd/' + entry)
    } catch {
      // The descriptor readdir itself used, gone by now.
      continue
    }
    if (target === file) found.push(Number(entry))
  }
  return found.sort((a, b) => a - b)
}

// The sink closes a retired descriptor with fs.close, whose callback it
// does not expose: wait for the effect, however busy the thread pool is.
async function settle (check) {
  const deadline = Date.now() + WAIT_LIMIT_MS
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('LineSink reopen and its descriptors', () => {
  it('should close the descriptor of the renamed file on reopen, and hold one descriptor after any number of rotations', async (t) => {
    const dir = await tempDir(t)
    const file = path.join(dir, 'access.log')
    const sink = new LineSink({ file })
    t.after(() => sink.close())
    await sink.open()
    const first = sink.fd
    assert.deepEqual(descriptorsOn(file), [first])

    for (let rotation = 1; rotation <= 5; rotation++) {
      sink.write('line ' + rotation + '\n')
      await sink.flushed()
      const rotated = file + '.' + rotation
      await fs.rename(file, rotated)
      const old = sink.fd
      assert.deepEqual(descriptorsOn(rotated), [old])
      await sink.reopen()
      assert.notEqual(sink.fd, old)
      await settle(() => descriptorsOn(rotated).length === 0)
      assert.deepEqual(descriptorsOn(rotated), [], 'rotation ' + rotation + ': the renamed file is still open')
      assert.deepEqual(descriptorsOn(file), [sink.fd])
    }
    sink.write('line 6\n')
    await sink.flushed()
    for (let rotation = 1; rotation <= 5; rotation++) {
      assert.equal(await fs.readFile(file + '.' + rotation, 'utf8'), 'line ' + rotation + '\n')
    }
    assert.equal(await fs.readFile(file, 'utf8'), 'line 6\n')
    await sink.close()
    assert.deepEqual(descriptorsOn(file), [])
  })

  it('should keep the old descriptor of a pipe while a write to it is in flight, and close it right after', async (t) => {
    const dir = await tempDir(t)
    const fifo = path.join(dir, 'access.fifo')
    execFileSync('mkfifo', [fifo])
    // The reader end first, non-blocking, so that opening it does not wait
    // for the writer, and the sink's open finds a reader.
    const reader = fsSync.openSync(fifo, fsSync.constants.O_RDONLY | fsSync.constants.O_NONBLOCK)
    const sink = new LineSink({ file: fifo })
    // The reader goes first: a write still blocked then fails (EPIPE) and
    // the sink can close.
    t.after(async () => {
      fsSync.closeSync(reader)
      await sink.close()
    })
    await sink.open()
    const old = sink.fd
    // The reader's descriptor is on the FIFO too.
    const writers = () => descriptorsOn(fifo).filter((fd) => fd !== reader)
    assert.deepEqual(writers(), [old])
    // Far more than a pipe holds (64 KiB): with nobody reading, a write of
    // the sink blocks in the thread pool, so one is in flight at the reopen.
    const sent = []
    for (let i = 0; i < 4000; i++) {
      const line = 'line ' + i + ' ' + 'x'.repeat(60) + '\n'
      sent.push(line)
      sink.write(line)
    }
    assert.equal(sink.writing, true)
    await sink.reopen()
    const fresh = sink.fd
    assert.notEqual(fresh, old)
    assert.equal(sink.writing, true)
    assert.deepEqual(writers(), [old, fresh].sort((a, b) => a - b), 'the old descriptor was closed under a write in flight')

    const received = []
    await drainWhile(reader, received, () => sink.flushed())
    await settle(() => writers().length === 1)
    assert.deepEqual(writers(), [fresh], 'the old descriptor was not closed after its last write')
    // Every line once, in order, none split between the two descriptors.
    assert.equal(received.join(''), sent.join(''))
    await sink.close()
    assert.deepEqual(writers(), [])
  })
})

/**
 * Read the pipe until `work()` settles, then what is left.
 * @param {number} fd the non-blocking reader
 * @param {string[]} into what was read
 * @param {() => Promise<void>} work
 */
async function drainWhile (fd, into, work) {
  let done = false
  const finished = work().then(() => { done = true })
  const buffer = Buffer.alloc(65536)
  for (;;) {
    let count
    try {
      count = fsSync.readSync(fd, buffer, 0, buffer.length, null)
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err
      count = -1
    }
    if (count > 0) {
      into.push(buffer.toString('latin1', 0, count))
      continue
    }
    if (done) break
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  await finished
}
