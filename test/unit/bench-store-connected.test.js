'use strict'

// bench/store-connected.js: the row with a store is timed only once its
// svr's log says the store is connected; an svr serving without its store
// (never reached, or lost since) stops the row with what its log said.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { expectStoreConnected, storeState } = require('../../bench/store-connected')

const WORKLOAD = { name: 'hello-rate-limit-store' }
const CONNECTED = '2026-11-28T01:00:00.000Z info store redis://127.0.0.1:40123 connected'
const REFUSED = '2026-11-28T01:00:00.000Z warn store redis://127.0.0.1:40123 not reachable: ECONNREFUSED; ' +
  'every instance acts on its own until it is back'
const LOST = '2026-11-28T01:00:01.000Z warn store redis://127.0.0.1:40123 lost: connection closed; ' +
  'every instance acts on its own until it is back'
const BACK = '2026-11-28T01:00:03.000Z info store redis://127.0.0.1:40123 is back after 2 s'

async function logFile (t, text) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-store-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'svr.log')
  await fs.writeFile(file, text)
  return file
}

describe('bench store check', () => {
  it('reads the last store line of a log', () => {
    assert.equal(storeState('svr listening on http://127.0.0.1:8080\n'), null)
    assert.deepEqual(storeState(`x\n${CONNECTED}\ny\n`), { up: true, line: CONNECTED })
    assert.deepEqual(storeState(`${CONNECTED}\n${LOST}\n`), { up: false, line: LOST })
    assert.deepEqual(storeState(`${CONNECTED}\n${LOST}\n${BACK}`), { up: true, line: BACK })
    assert.equal(storeState(REFUSED).up, false)
    // A database in the URL is part of where the store is.
    assert.equal(storeState('store redis://127.0.0.1:40123/2 connected').up, true)
  })

  it('waits for the primary to connect after svr first answers', async (t) => {
    const file = await logFile(t, 'svr listening on http://127.0.0.1:8080\n')
    setTimeout(() => fs.appendFile(file, CONNECTED + '\n'), 100)
    await expectStoreConnected({ name: 'svr rate-limit-store', logFile: file }, WORKLOAD, { timeoutMs: 5000 })
  })

  it('fails, quoting the log, when the store is not reachable or was lost', async (t) => {
    const target = { name: 'svr rate-limit-store', logFile: await logFile(t, REFUSED + '\n') }
    await assert.rejects(expectStoreConnected(target, WORKLOAD, { timeoutMs: 50 }),
      /^Error: hello-rate-limit-store: svr rate-limit-store is not connected to its store after 50 ms \(last: "[^"]+ not reachable: ECONNREFUSED;/)
    await fs.writeFile(target.logFile, `${CONNECTED}\n${LOST}\n`)
    await assert.rejects(expectStoreConnected(target, WORKLOAD, { timeoutMs: 50 }), /\(last: "[^"]+ lost: connection closed;.*so it is not measured$/)
  })

  it('fails when svr never names a store (a config without one)', async (t) => {
    const target = { name: 'svr', logFile: await logFile(t, 'svr listening on http://127.0.0.1:8080\n') }
    await assert.rejects(expectStoreConnected(target, WORKLOAD, { timeoutMs: 50 }), /after 50 ms \(no store line in /)
  })
})
