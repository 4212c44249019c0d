'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, SvrProcess, SVR } = require('../helpers/server')

const ROOT = path.dirname(SVR)
const PRELOAD = path.join(__dirname, '..', 'fixtures', 'loaded-modules.js')
// Folders whose code runs only where requests are served.
const WORKER_SIDE = ['lib/worker/', 'lib/pipeline/', 'lib/http2/', 'lib/static/', 'lib/file-store/', 'lib/listing/']

// lib/ files a cluster primary loaded from start to stop.
async function primaryModules (t, site) {
  const out = path.join(site.dir, 'loaded.json')
  const child = spawn(process.execPath, ['--require', PRELOAD, SVR, '--config', site.configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, SVR_LOADED_MODULES: out }
  })
  const server = new SvrProcess(child)
  t.after(() => server.kill())
  await server.waitFor(/listening on/, 15000)
  server.signal('SIGTERM')
  assert.deepEqual(await server.exited, { code: 0, signal: null }, server.output)
  const loaded = JSON.parse(await fs.readFile(out, 'utf8'))
  return loaded.map((file) => path.relative(ROOT, file)).filter((file) => file.startsWith('lib/')).sort()
}

describe('the primary of a cluster', () => {
  it('loads no worker-side module: it serves no request', async (t) => {
    const site = await makeSite(t, { port: 0, workers: 2 })
    const loaded = await primaryModules(t, site)
    // What a primary must load, so that an empty list cannot pass.
    assert.ok(loaded.includes('lib/primary/supervisor.js'), loaded.join('\n'))
    assert.ok(loaded.includes('lib/primary/coordinator.js'), loaded.join('\n'))
    assert.deepEqual(loaded.filter((file) => WORKER_SIDE.some((dir) => file.startsWith(dir))), [])
  })
})
