'use strict'

// What --check-config says of a `store` it cannot use: each problem with
// its JSON pointer, and never the password.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, runSvr } = require('../helpers/server')
const { clientOptions, describe: describeStore } = require('../../lib/store/fleet-store')

describe('store configuration', () => {
  it('refuses a store it cannot use, naming each key', async (t) => {
    const site = await makeSite(t, {
      store: { url: 'redis://svr:hunter2@127.0.0.1:6379/22', passwordFile: 'missing-password', ca: 'ca.pem', sentinels: ['10.0.0.1:26379'] }
    })
    const result = await runSvr(['--check-config', '--config', site.configFile])
    assert.equal(result.code, 1)
    const lines = (result.stdout + result.stderr).split('\n').filter((line) => line.includes('/store/'))
    assert.deepEqual(lines.map((line) => line.slice(line.indexOf('/store/'))), [
      '/store/url: holds a password: put it in the file named by "passwordFile", which config.json only names',
      '/store/url: the path is the database number, 0 to 15 ("redis://host:6379/2")',
      '/store/masterName: needed with "sentinels": the name Sentinel monitors the primary under',
      '/store/ca: only used with a rediss:// URL'
    ])
    assert.equal((result.stdout + result.stderr).includes('hunter2'), false)
  })

  it('refuses a user name that is not valid percent-encoding, and a commandTimeout a worker would not wait for', async (t) => {
    const site = await makeSite(t, { store: { url: 'redis://%E0%A4%A@127.0.0.1:6379', commandTimeout: 1000 } })
    const result = await runSvr(['--check-config', '--config', site.configFile])
    assert.equal(result.code, 1)
    const lines = (result.stdout + result.stderr).split('\n').filter((line) => line.includes('/store/'))
    assert.deepEqual(lines.map((line) => line.slice(line.indexOf('/store/'))).sort(), [
      '/store/commandTimeout: must be <= 900 (got 1000)',
      '/store/url: the user name is not valid percent-encoding'
    ])
  })

  it('refuses a password file it cannot read, or an empty one', async (t) => {
    const site = await makeSite(t, { store: { url: 'redis://127.0.0.1:6379', passwordFile: 'password' } })
    const missing = await runSvr(['--check-config', '--config', site.configFile])
    assert.equal(missing.code, 1)
    assert.match(missing.stdout + missing.stderr, /\/store\/passwordFile: cannot read .*password: ENOENT/)
    await fs.writeFile(path.join(site.dir, 'password'), '\n')
    const empty = await runSvr(['--check-config', '--config', site.configFile])
    assert.match(empty.stdout + empty.stderr, /\/store\/passwordFile: .*password is empty; its first line is the password/)
    await fs.writeFile(path.join(site.dir, 'password'), 's3cret\nignored\n')
    assert.equal((await runSvr(['--check-config', '--config', site.configFile])).code, 0)
  })

  it('connects as the URL says: database, user, TLS with its CA, or Sentinel', () => {
    const settings = { url: 'rediss://svr@cache.internal:6380/3', prefix: 'site1:', sentinels: [], masterName: null, commandTimeout: 250 }
    const direct = clientOptions(settings, { password: 'pw', ca: 'PEM' })
    assert.deepEqual([direct.host, direct.port, direct.db, direct.username, direct.password, direct.keyPrefix, direct.commandTimeout, direct.tls, direct.enableOfflineQueue],
      ['cache.internal', 6380, 3, 'svr', 'pw', 'site1:', 250, { ca: 'PEM', servername: 'cache.internal' }, false])
    const sentinel = clientOptions({ ...settings, url: 'redis://127.0.0.1/1', sentinels: ['10.0.0.1:26379', 'sentinel.b:26380'], masterName: 'main' }, { password: null, ca: null })
    assert.deepEqual([sentinel.sentinels, sentinel.name, sentinel.db, sentinel.host, sentinel.enableTLSForSentinelMode],
      [[{ host: '10.0.0.1', port: 26379 }, { host: 'sentinel.b', port: 26380 }], 'main', 1, undefined, undefined])
    const secureSentinel = clientOptions({ ...settings, sentinels: ['10.0.0.1:26379'], masterName: 'main' }, { password: null, ca: 'PEM' })
    assert.deepEqual([secureSentinel.enableTLSForSentinelMode, secureSentinel.sentinelTLS, secureSentinel.tls.ca], [true, secureSentinel.tls, 'PEM'])
    // Each connection checks the host it reaches, not the URL's.
    assert.equal(secureSentinel.tls.servername, undefined)
    assert.equal(describeStore(settings), 'rediss://cache.internal:6380/3')
    // Back-off: 100 ms doubling, at most 5 s.
    assert.deepEqual([1, 2, 3, 7, 20].map(direct.retryStrategy), [100, 200, 400, 5000, 5000])
  })
})
