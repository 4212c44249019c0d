'use strict'

// bench/server-output.js: a bench keeps only svr's own log lines of what a
// server prints, finds them across chunk boundaries, and a wait ends with
// an error when the server is gone.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { PassThrough } = require('node:stream')
const { ServerOutput, ownLines } = require('../../bench/server-output')

const ACCESS = '127.0.0.1 - - [29/Nov/2026:08:23:51 +0000] "GET /a.html HTTP/1.1" 200 3 "-" "wrk" "3aa9c625"'
const APPLIED = '2026-11-29T08:24:00.100Z info [primary] reload applied: 2 worker(s) running the new configuration'

function fakeChild () {
  const child = new EventEmitter()
  child.stdout = new PassThrough()
  child.stderr = new PassThrough()
  return child
}

function tick () {
  return new Promise((resolve) => setImmediate(resolve))
}

describe('a bench\'s server output', () => {
  it('should keep every stdout line but the access log\'s, and every stderr line', () => {
    const text = [ACCESS, APPLIED, ACCESS, '2026-11-29T08:24:00.200Z warn [worker 1] slow', 'listening on https://127.0.0.1:18631'].join('\n')
    assert.deepEqual(ownLines(text, false), [APPLIED, '2026-11-29T08:24:00.200Z warn [worker 1] slow', 'listening on https://127.0.0.1:18631'])
    assert.deepEqual(ownLines('TypeError: x\n    at y (z.js:1:2)', true), ['TypeError: x', '    at y (z.js:1:2)'])
  })

  it('should find a line split over two chunks, only after the mark', async () => {
    const child = fakeChild()
    const output = new ServerOutput(child)
    child.stdout.write('2026-11-29T08:23:00.000Z info [primary] reload applied: old\n' + ACCESS + '\n')
    await tick()
    const mark = output.mark()
    assert.equal(mark, 1)
    let match = null
    output.waitFor(/reload (applied|failed)/, mark).then((found) => { match = found })
    child.stdout.write(ACCESS + '\n' + APPLIED.slice(0, 40))
    await tick()
    assert.equal(match, null)
    child.stdout.write(APPLIED.slice(40) + '\n')
    await tick()
    assert.equal(match[1], 'applied')
    assert.deepEqual(output.lines, ['2026-11-29T08:23:00.000Z info [primary] reload applied: old', APPLIED])
  })

  it('should reject a wait once the server has exited, with what it printed', async () => {
    const child = fakeChild()
    const output = new ServerOutput(child)
    const waiting = output.waitFor(/listening on/)
    child.stderr.write('config.json: /port must be integer\n')
    await tick()
    child.emit('close', 1, null)
    await assert.rejects(waiting, /exited with code 1 before printing what was awaited:\nconfig\.json: \/port must be integer/)
    await assert.rejects(output.waitFor(/listening on/), /exited with code 1/)
  })
})
