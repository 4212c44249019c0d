'use strict'

// bench/against.js: the svr of `--against DIR` runs today's site config,
// less only the keys that checkout's schema does not define. Leaving out
// keys it knows (once: the proxy routes and the response cache, always)
// spared it work today's svr did, and made the same code's own µs look
// lower on the against side.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { keysUnknownTo } = require('../../bench/against')

const TODAY = { properties: { port: {}, proxy: {}, responseCache: {}, store: {}, acme: {} } }

async function checkout (t, properties) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-against-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  if (properties !== null) {
    await fs.mkdir(path.join(dir, 'lib', 'config'), { recursive: true })
    await fs.writeFile(path.join(dir, 'lib', 'config', 'schema.json'), JSON.stringify({ type: 'object', properties }))
  }
  return dir
}

describe('the config of the svr of --against', () => {
  it('should leave out nothing for a build that knows every key', async (t) => {
    const dir = await checkout(t, TODAY.properties)
    assert.deepEqual(await keysUnknownTo(dir, TODAY), {})
  })

  it('should leave out exactly the keys the other schema lacks', async (t) => {
    const dir = await checkout(t, { port: {}, proxy: {}, responseCache: {} })
    const overrides = await keysUnknownTo(dir, TODAY)
    assert.deepEqual(Object.keys(overrides).sort(), ['acme', 'store'])
    assert.deepEqual(JSON.parse(JSON.stringify({ port: 1, proxy: [], store: {}, acme: {}, ...overrides })), { port: 1, proxy: [] })
  })

  it('should leave out the proxy routes and the response cache of a build without a schema file', async (t) => {
    const dir = await checkout(t, null)
    assert.deepEqual(Object.keys(await keysUnknownTo(dir, TODAY)).sort(), ['proxy', 'responseCache'])
  })

  it('should leave out nothing of today\'s site for this checkout', async () => {
    assert.deepEqual(await keysUnknownTo(path.join(__dirname, '..', '..')), {})
  })
})
