'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const { readFileSync } = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LineSink } = require('../../lib/logging/sink')

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-sink-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

describe('LineSink', () => {
  it('should append lines in order and settle flushed() once they are written', async (t) => {
    const file = path.join(await tempDir(t), 'access.log')
    await fs.writeFile(file, 'existing\n')
    const sink = new LineSink({ file })
    await sink.open()
    for (let i = 0; i < 5000; i++) sink.write('line ' + i + '\n')
    await sink.flushed()
    const lines = (await fs.readFile(file, 'utf8')).trimEnd().split('\n')
    assert.equal(lines.length, 5001)
    assert.equal(lines[0], 'existing')
    lines.slice(1).forEach((line, i) => assert.equal(line, 'line ' + i))
    await sink.close()
  })

  it('should not write on the caller\'s tick', async (t) => {
    const file = path.join(await tempDir(t), 'access.log')
    // With no delay the write starts at once, off the thread, and may be over by the next line.
    const sink = new LineSink({ file, flushDelay: 25 })
    await sink.open()
    sink.write('one\n')
    assert.equal(readFileSync(file, 'utf8'), '')
    await sink.flushed()
    assert.equal(await fs.readFile(file, 'utf8'), 'one\n')
    await sink.close()
  })

  it('should batch lines of a quiet moment and write them within a fraction of a second', async (t) => {
    const file = path.join(await tempDir(t), 'access.log')
    const sink = new LineSink({ file, flushDelay: 25 })
    await sink.open()
    sink.write('one\n')
    await new Promise((resolve) => setImmediate(resolve))
    sink.write('two\n')
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Written on its own, without flushed() asking for it.
    assert.equal(readFileSync(file, 'utf8'), 'one\ntwo\n')
    await sink.close()
  })

  it('should hold a line for flushDelay, and write it by the end of the turn with flushDelay 0', async (t) => {
    const dir = await tempDir(t)
    const held = new LineSink({ file: path.join(dir, 'held.log'), flushDelay: 1000 })
    const direct = new LineSink({ file: path.join(dir, 'direct.log'), flushDelay: 0 })
    await Promise.all([held.open(), direct.open()])
    held.write('one\n')
    direct.write('one\n')
    direct.write('two\n')
    // The lines of one turn share a write, made once the turn's callbacks are over.
    assert.equal(readFileSync(path.join(dir, 'direct.log'), 'utf8'), '')
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(readFileSync(path.join(dir, 'direct.log'), 'utf8'), 'one\ntwo\n')
    assert.equal(direct.pendingBytes, 0)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(readFileSync(path.join(dir, 'held.log'), 'utf8'), '')
    assert.equal(held.pendingBytes, 4)
    await Promise.all([held.close(), direct.close()])
    assert.equal(readFileSync(path.join(dir, 'held.log'), 'utf8'), 'one\n')
  })

  it('should report a failed write to a regular file once and go on with later lines', async (t) => {
    const file = path.join(await tempDir(t), 'read-only.log')
    await fs.writeFile(file, '')
    const handle = await fs.open(file, 'r')
    t.after(() => handle.close())
    const errors = []
    const sink = new LineSink({ fd: handle.fd, onError: (err) => errors.push(err.code) })
    await sink.open()
    assert.equal(sink.regularFile, true)
    for (let round = 0; round < 3; round++) {
      sink.write('x\n')
      await sink.flushed()
    }
    assert.deepEqual(errors, ['EBADF'])
    assert.equal(sink.pendingBytes, 0)
  })

  it('should write in file-sized batches to a descriptor that is a regular file, in pipe-sized ones to a pipe', async (t) => {
    const file = path.join(await tempDir(t), 'stdout.log')
    const handle = await fs.open(file, 'a')
    t.after(() => handle.close())
    const toFile = new LineSink({ fd: handle.fd })
    await toFile.open()
    assert.equal(toFile.batchBytes, 65536)
    assert.equal(toFile.regularFile, true)
    const { spawn } = require('node:child_process')
    const child = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] })
    t.after(() => child.kill())
    const toPipe = new LineSink({ fd: child.stdin._handle.fd })
    await toPipe.open()
    assert.equal(toPipe.batchBytes, 4096)
    // A pipe's reader can stall: its writes stay off the event loop's thread.
    assert.equal(toPipe.regularFile, false)
    toPipe.write('x\n')
    assert.equal(toPipe.writing, true)
    await toPipe.flushed()
  })

  it('should switch to a new file on reopen without losing or splitting a line', async (t) => {
    const dir = await tempDir(t)
    const file = path.join(dir, 'access.log')
    const sink = new LineSink({ file })
    await sink.open()
    const total = 20000
    let written = 0
    const writeSome = (n) => { for (let i = 0; i < n; i++) sink.write('line ' + written++ + ' ' + 'x'.repeat(50) + '\n') }
    writeSome(5000)
    await new Promise((resolve) => setImmediate(resolve))
    await fs.rename(file, file + '.1')
    const reopened = sink.reopen()
    writeSome(5000)
    await reopened
    writeSome(total - written)
    await sink.flushed()
    const old = (await fs.readFile(file + '.1', 'utf8')).split('\n').filter(Boolean)
    const fresh = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean)
    const all = old.concat(fresh)
    assert.equal(all.length, total)
    all.forEach((line, i) => assert.equal(line, 'line ' + i + ' ' + 'x'.repeat(50)))
    assert.ok(fresh.length >= total - 10000, 'lines after the reopen are in the new file')
    await sink.close()
  })

  it('should write lines vouched as ASCII as they are, and a batch with any other line in UTF-8', async (t) => {
    const file = path.join(await tempDir(t), 'access.log')
    const sink = new LineSink({ file })
    await sink.open()
    sink.write('GET /a\n', true)
    await sink.flushed()
    sink.write('GET /b\n', true)
    sink.write('caf\u00e9 \u2713 \u{1f600}\n')
    sink.write('GET /c\n', true)
    await sink.flushed()
    sink.write('GET /d\n', true)
    await sink.flushed()
    assert.deepEqual(await fs.readFile(file), Buffer.from('GET /a\nGET /b\ncaf\u00e9 \u2713 \u{1f600}\nGET /c\nGET /d\n', 'utf8'))
    await sink.close()
  })

  it('should write a line that is not ASCII in UTF-8 when the batches before it were all ASCII', async (t) => {
    // More than a batch of a regular file (64 KiB) in one turn: the first
    // batch is ASCII only, the second holds the last line.
    const file = path.join(await tempDir(t), 'access.log')
    const sink = new LineSink({ file })
    await sink.open()
    const ascii = 'x'.repeat(99) + '\n'
    for (let i = 0; i < 700; i++) sink.write(ascii, true)
    sink.write('\u00e9\n')
    await sink.flushed()
    const written = await fs.readFile(file)
    assert.equal(written.length, 70000 + 3)
    assert.deepEqual(written.subarray(70000), Buffer.from('\u00e9\n', 'utf8'))
    await sink.close()
  })

  it('should report a write failure once, not once per batch', async (t) => {
    const errors = []
    const sink = new LineSink({ fd: 987654, onError: (err) => errors.push(err.code) })
    for (let round = 0; round < 3; round++) {
      sink.write('x\n')
      await sink.flushed()
    }
    assert.deepEqual(errors, ['EBADF'])
  })
})
