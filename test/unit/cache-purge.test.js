'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { CacheCoordinator, purgeMatcher } = require('../../lib/cache/service')

describe('purging the response cache', () => {
  it('should name one URL with its variants, a prefix, or everything', () => {
    const keys = ['GET a.example /x', 'GET a.example /x\naccept-language:en', 'GET a.example /x?y=1', 'GET a.example /xy', 'GET b.example /x']
    const pick = (target) => keys.filter(purgeMatcher(target))
    assert.deepEqual(pick('http://A.example/x'), ['GET a.example /x', 'GET a.example /x\naccept-language:en'])
    assert.deepEqual(pick('https://a.example/x*'), keys.slice(0, 4))
    assert.deepEqual(pick('all'), keys)
    assert.equal(purgeMatcher('/x'), null)
    assert.equal(purgeMatcher('ftp://a.example/x'), null)
  })

  it('should remove the files and tell every worker to drop its copy', async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-purge-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const told = []
    const peer = { notify: (act, fields) => told.push([act, fields.keys]) }
    const cache = new CacheCoordinator({ targets: () => [{ peer }, { peer: null }], log: { warn () {} } })
    assert.equal(cache.purge('all'), 'purge: nothing is cached (no "cache" rule, no proxy route with "cache")')
    cache.configure({ config: { proxy: [{ cache: {} }], responseCache: { directory: dir, maxSize: 1e6, lockTimeout: 5000 } } })
    for (const key of ['GET a.example /x', 'GET a.example /y']) {
      const size = await cache.store.put(key, {}, Buffer.from('body'))
      cache.services()['cache-filled']({ key, stored: true, size }, peer)
    }
    assert.equal(cache.purge('http://a.example/x'), 'purge: 1 cached answer removed')
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(await cache.store.get('GET a.example /x'), null)
    assert.notEqual(await cache.store.get('GET a.example /y'), null)
    assert.deepEqual(told, [['cache-drop', ['GET a.example /x']]])
    assert.equal(cache.purge('nonsense'), 'purge: give a URL ("http://host/path"), a prefix ending in "*", or "all"')
  })
})
