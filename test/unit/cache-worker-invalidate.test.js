'use strict'

// A worker that passed on a request changing a URL takes no entry of that
// URL stored before, even while the primary (which removes the files and
// tells every worker) has not answered yet.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { ResponseCache } = require('../../lib/cache/worker-cache')

// A primary that never answers: what the worker knows is its own.
const silentPrimary = { notify () {}, request: () => new Promise(() => {}) }
const log = { warn () {} }

function meta (now, vary = []) {
  return { status: 200, headers: { 'content-type': 'text/plain' }, initialAge: 0, vary, storedAt: now, freshUntil: now + 60000, staleWhileRevalidateUntil: now + 60000, staleIfErrorUntil: now + 60000, policy: {} }
}

async function workerCache (t, memorySize) {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-cache-worker-'))
  const cache = new ResponseCache({ directory, memorySize, lockTimeout: 1000 }, silentPrimary, log)
  t.after(async () => {
    cache.stop()
    await fs.rm(directory, { recursive: true, force: true })
  })
  return cache
}

describe('ResponseCache#invalidate', () => {
  for (const memorySize of [0, 1024 * 1024]) {
    it('takes no entry of the URL stored before it, from ' + (memorySize === 0 ? 'disk' : 'memory') + ', and takes one stored after', async (t) => {
      const cache = await workerCache(t, memorySize)
      const base = 'GET example.com /page'
      const headers = { 'accept-encoding': 'gzip' }
      await cache.store(base, headers, meta(Date.now() - 10, ['accept-encoding']), Buffer.from('old'))
      await cache.store('GET example.com /other', {}, meta(Date.now() - 10), Buffer.from('other'))
      assert.equal((await cache.lookup(base, headers)).entry.body.toString(), 'old')
      cache.invalidate(base)
      assert.equal((await cache.lookup(base, headers)).entry, null)
      assert.equal((await cache.lookup('GET example.com /other', {})).entry.body.toString(), 'other')
      await new Promise((resolve) => setTimeout(resolve, 5))
      await cache.store(base, headers, meta(Date.now(), ['accept-encoding']), Buffer.from('new'))
      assert.equal((await cache.lookup(base, headers)).entry.body.toString(), 'new')
    })
  }
})
