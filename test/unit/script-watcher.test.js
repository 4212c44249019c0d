'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { ScriptWatcher } = require('../../lib/primary/script-watcher')
const { waitUntil } = require('../helpers/wait')

const INTERVAL_MS = 20

async function scriptIn (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-watch-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'serverSideScript.js')
  await fs.writeFile(file, 'one\n')
  return file
}

function watch (t, file) {
  const seen = { changes: 0 }
  const watcher = new ScriptWatcher(file, INTERVAL_MS, () => { seen.changes++ })
  t.after(() => watcher.stop())
  return seen
}

describe('ScriptWatcher', () => {
  it('should report an edit made right after the watch starts, once', async (t) => {
    const file = await scriptIn(t)
    const seen = watch(t, file)
    // Before any look of the watcher: the starting point is the script as it was when the watch began.
    await fs.writeFile(file, 'two, longer\n')
    await waitUntil(async () => seen.changes === 1, 'the edit was not reported', 2000)
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5))
    assert.equal(seen.changes, 1)
  })

  it('should report nothing while the script is unchanged', async (t) => {
    const file = await scriptIn(t)
    const seen = watch(t, file)
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 10))
    assert.equal(seen.changes, 0)
  })

  it('should report a removal and the script coming back', async (t) => {
    const file = await scriptIn(t)
    const seen = watch(t, file)
    await fs.rm(file)
    await waitUntil(async () => seen.changes === 1, 'the removal was not reported', 2000)
    await fs.writeFile(file, 'back\n')
    await waitUntil(async () => seen.changes === 2, 'the new script was not reported', 2000)
  })

  it('should report nothing after stop', async (t) => {
    const file = await scriptIn(t)
    const seen = { changes: 0 }
    const watcher = new ScriptWatcher(file, INTERVAL_MS, () => { seen.changes++ })
    watcher.stop()
    await fs.writeFile(file, 'two, longer\n')
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 10))
    assert.equal(seen.changes, 0)
  })
})
