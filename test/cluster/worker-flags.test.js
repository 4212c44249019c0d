'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { FRAME_FLAG } = require('../../lib/primary/worker-flags')

// /flags: the worker's Node options; /late-throw: a callback of the script
// throws after the script returned, which the request's scope must turn
// into that request's 500 under either way of keeping async context.
const SCRIPT = `
if (href === '/flags') {
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify(process.execArgv))
  return
}
if (href === '/late-throw') {
  setTimeout(function () { throw new Error('late failure') }, 5)
  return
}
`

// What this Node's workers should run with.
function expectedFlags () {
  const major = Number(process.versions.node.split('.')[0])
  return major < 24 && process.allowedNodeEnvironmentFlags.has(FRAME_FLAG) ? [FRAME_FLAG] : []
}

describe('the Node options of workers', () => {
  const cleanups = []
  const hooks = { after: (fn) => cleanups.push(fn) }
  let svr

  before(async () => {
    const site = await makeSite(hooks, { workers: 1, enableLogging: false })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    svr = await startSvr(hooks, site.configFile)
  })

  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
  })

  it('should keep async context in frames on Node 22 and leave Node 20 and 24 as they are', async () => {
    const res = await fetch(`http://127.0.0.1:${svr.port}/flags`)
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), expectedFlags())
  })

  it('should still answer a script callback that throws later with that request\'s 500', async () => {
    const res = await fetch(`http://127.0.0.1:${svr.port}/late-throw`)
    assert.equal(res.status, 500)
    await res.text()
    const again = await fetch(`http://127.0.0.1:${svr.port}/flags`)
    assert.equal(again.status, 200)
  })
})
