'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { clientLoop } = require('../helpers/client-loop')

const version = (text) => "if (href === '/version') { res.end('" + text + "'); return }\n"

describe('serverSideScript.js reloading', () => {
  it('should roll out a changed script on SIGHUP without a failed request, and refuse a broken one', async (t) => {
    const site = await makeSite(t, { workers: 2 })
    const script = path.join(site.dir, 'serverSideScript.js')
    await fs.writeFile(script, version('one'))
    const svr = await startSvr(t, site.configFile)
    assert.match(svr.output, /application code: serverSideScript\.js/)
    const loop = clientLoop(svr.port, '/version')
    await new Promise((resolve) => setTimeout(resolve, 100))
    let mark = svr.output.length
    await fs.writeFile(script, version('two'))
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    await new Promise((resolve) => setTimeout(resolve, 100))
    await loop.stop()
    assert.deepEqual(loop.stats.errors, [])
    assert.ok(loop.stats.bodies.has('one') && loop.stats.bodies.has('two'))
    assert.equal((await request(svr.port, '/version')).body, 'two')

    mark = svr.output.length
    await fs.writeFile(script, "if (href === '/version' {\n")
    svr.signal('SIGHUP')
    await svr.waitFor(/reload refused/, 15000, mark)
    assert.match(svr.output.slice(mark), /serverSideScript\.js:1: SyntaxError/)
    assert.equal((await request(svr.port, '/version')).body, 'two')
  })

  it('should reload by itself when watchServerSideScript is on', async (t) => {
    const site = await makeSite(t, { workers: 1, watchServerSideScript: true })
    const script = path.join(site.dir, 'serverSideScript.js')
    await fs.writeFile(script, version('before'))
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/version')).body, 'before')
    const mark = svr.output.length
    await fs.writeFile(script, version('after edit'))
    await svr.waitFor(/reload applied/, 15000, mark)
    assert.equal((await request(svr.port, '/version')).body, 'after edit')
  })
})
