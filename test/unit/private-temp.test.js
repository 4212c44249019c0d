'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { makePrivateTemp, removeOrphans } = require('../../lib/util/private-temp')

describe('private temp directories', () => {
  it('should make a 0700 directory named after the pid', async () => {
    const dir = await makePrivateTemp('svr-unit-')
    try {
      assert.match(path.basename(dir), new RegExp('^svr-unit-' + process.pid + '-'))
      assert.equal((await fs.stat(dir)).mode & 0o777, 0o700)
    } finally {
      await fs.rm(dir, { recursive: true })
    }
  })

  it('should remove the directories of dead processes and keep those of live ones', async () => {
    // A pid that has certainly exited: a child that ran and was reaped.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()
    const orphan = path.join(os.tmpdir(), 'svr-unit-' + dead + '-orphan')
    await fs.mkdir(orphan)
    const live = await makePrivateTemp('svr-unit-')
    try {
      assert.equal(await removeOrphans('svr-unit-'), 1)
      await assert.rejects(fs.access(orphan))
      await fs.access(live)
    } finally {
      await fs.rm(live, { recursive: true, force: true })
      await fs.rm(orphan, { recursive: true, force: true })
    }
  })
})
