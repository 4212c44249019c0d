'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { CacheCoordinator } = require('../../lib/cache/service')
const { purgeMatcher, keyMatcher, requestPurge } = require('../../lib/cache/purge-target')
const { fromThisMachine } = require('../../lib/pipeline/stages/cache-purge')

const KEYS = ['GET a.example /x', 'GET a.example /x\naccept-language:en', 'GET a.example /x?y=1', 'GET a.example /xy', 'GET b.example /x']

/**
 * A coordinator over a temporary directory whose workers' notices are
 * recorded, each with whether the removal of every file it names was over.
 */
async function coordinatorFor (t, responseCache = {}) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-purge-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  const told = []
  const logged = []
  const removed = new Set()
  const peer = {
    notify: (act, fields) => told.push([act, fields.keys, fields.keys.every((key) => removed.has(key))])
  }
  const cache = new CacheCoordinator({ targets: () => [{ peer }, { peer: null }], log: { warn () {}, info: (line) => logged.push(line) } })
  const options = { config: { proxy: [{ cache: {} }], responseCache: { directory: dir, maxSize: 1e6, lockTimeout: 5000, purgeOnReload: false, ...responseCache } } }
  await cache.configure(options)
  const remove = cache.store.delete.bind(cache.store)
  cache.store.delete = async (key) => {
    const found = await remove(key)
    removed.add(key)
    return found
  }
  async function fill (key) {
    const size = await cache.store.put(key, {}, Buffer.from('body'))
    cache.services()['cache-filled']({ key, stored: true, size }, peer)
    return size
  }
  return { cache, told, logged, peer, options, fill }
}

describe('purging the response cache', () => {
  it('should name one URL with its variants, a prefix, or everything', () => {
    const pick = (target) => KEYS.filter(purgeMatcher(target))
    assert.deepEqual(pick('http://A.example/x'), ['GET a.example /x', 'GET a.example /x\naccept-language:en'])
    assert.deepEqual(pick('https://a.example/x*'), KEYS.slice(0, 4))
    assert.deepEqual(pick('all'), KEYS)
    assert.equal(purgeMatcher('/x'), null)
    assert.equal(purgeMatcher('ftp://a.example/x'), null)
  })

  it('should read a PURGE request\'s target as a URL, or a prefix when it ends in "*"', () => {
    assert.deepEqual(requestPurge('a.example', '/x'), { base: 'GET a.example /x', prefix: false })
    assert.deepEqual(requestPurge('a.example', '/x*'), { base: 'GET a.example /x', prefix: true })
    assert.deepEqual(requestPurge('a.example', '/x?y=*'), { base: 'GET a.example /x?y=', prefix: true })
    const pick = ({ base, prefix }) => KEYS.filter(keyMatcher(base, prefix))
    assert.deepEqual(pick(requestPurge('a.example', '/x')), KEYS.slice(0, 2))
    assert.deepEqual(pick(requestPurge('a.example', '/x*')), KEYS.slice(0, 4))
    assert.deepEqual(pick(requestPurge('b.example', '/*')), ['GET b.example /x'])
  })

  it('should remove the files, then tell every worker to drop its copy', async (t) => {
    const { cache, told, fill } = await coordinatorFor(t)
    for (const key of ['GET a.example /x', 'GET a.example /y']) await fill(key)
    assert.equal(await cache.purge('http://a.example/x'), 'purge: 1 cached answer removed')
    assert.equal(await cache.store.get('GET a.example /x'), null)
    assert.notEqual(await cache.store.get('GET a.example /y'), null)
    assert.deepEqual(told, [['cache-drop', ['GET a.example /x'], true]])
    assert.equal(await cache.purge('nonsense'), 'purge: give a URL ("http://host/path"), a prefix ending in "*", or "all"')
  })

  it('should say so when no route caches', async () => {
    const cache = new CacheCoordinator({ targets: () => [], log: { warn () {}, info () {} } })
    assert.equal(await cache.purge('all'), 'purge: nothing is cached (no "cache" rule, no proxy route with "cache")')
    assert.equal(await cache.services()['cache-purge']({ base: 'GET a.example /x', prefix: false }), 0)
    assert.deepEqual(cache.metrics(), [])
  })

  it('should purge what a worker\'s PURGE names, in one notice per worker, and count it', async (t) => {
    const { cache, told, fill } = await coordinatorFor(t)
    for (const key of KEYS) await fill(key)
    const purge = cache.services()['cache-purge']
    assert.equal(await purge({ base: 'GET a.example /x', prefix: true }), 4)
    assert.deepEqual(told.map(([act, keys, gone]) => [act, keys.sort(), gone]), [['cache-drop', KEYS.slice(0, 4).sort(), true]])
    assert.equal(await purge({ base: 'GET b.example /x', prefix: false }), 1)
    assert.equal(await purge({ base: 'GET b.example /x', prefix: false }), 0)
    assert.throws(() => purge({ base: 'GET b.example /x' }), /malformed cache-purge/)
    const series = Object.fromEntries(cache.metrics().map((metric) => [metric.name, metric.values]))
    assert.deepEqual(series.svr_cache_purged_total.map((value) => value.value), [0, 5, 0, 0])
    assert.deepEqual(series.svr_cache_evictions_total, [{ labels: {}, value: 0 }])
    assert.deepEqual([series.svr_cache_entries[0].value, series.svr_cache_size_bytes[0].value], [0, 0])
    assert.deepEqual(series.svr_cache_fills_started_total, [{ labels: {}, value: 0 }])
  })

  it('should count what the budget evicts, and what is alone over it', async (t) => {
    const { cache, fill } = await coordinatorFor(t, { maxSize: 60 })
    const size = await fill('GET a.example /1')
    assert.ok(size * 2 > 60 && size < 60, 'entries of ' + size + ' bytes: one fits, two do not')
    await fill('GET a.example /2')
    cache.services()['cache-filled']({ key: 'GET a.example /huge', stored: true, size: 61 }, {})
    await cache.purge('all')
    const series = Object.fromEntries(cache.metrics().map((metric) => [metric.name, metric.values]))
    assert.deepEqual(series.svr_cache_evictions_total, [{ labels: {}, value: 2 }])
    assert.deepEqual(series.svr_cache_purged_total.map((value) => value.value), [1, 0, 0, 0])
  })

  it('should remove every entry on a reload with purgeOnReload, and only then', async (t) => {
    const { cache, told, logged, options, fill } = await coordinatorFor(t)
    await fill('GET a.example /x')
    await cache.configure(options)
    assert.equal(cache.budget.count, 1)
    await cache.configure({ config: { ...options.config, responseCache: { ...options.config.responseCache, purgeOnReload: true } } })
    assert.equal(cache.budget.count, 0)
    assert.equal(await cache.store.get('GET a.example /x'), null)
    assert.deepEqual(told, [['cache-drop', ['GET a.example /x'], true]])
    assert.deepEqual(logged, ['response cache: purgeOnReload removed 1 cached answer'])
  })
})

describe('who may purge', () => {
  it('should take loopback and Unix-socket peers, IPv4-mapped forms included', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '']) assert.equal(fromThisMachine(address, address), true, address)
    for (const address of ['192.0.2.2', '::ffff:192.0.2.2', 'fd00::2', '128.0.0.1', '::2']) assert.equal(fromThisMachine(address, address), false, address)
  })

  it('should never believe a forwarded address over the connection\'s peer', () => {
    // A trusted proxy elsewhere that says the client is local.
    assert.equal(fromThisMachine('192.0.2.2', '127.0.0.1'), false)
    // A proxy on this machine that relays a client from elsewhere.
    assert.equal(fromThisMachine('127.0.0.1', '203.0.113.7'), false)
  })
})
