'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startSvrOnTty } = require('../helpers/tty')
const { freePort, skipWithout } = require('../helpers/tools')

// `script` gives svr a terminal.
const noScript = skipWithout('script')

describe('console on a terminal', { skip: noScript }, () => {
  it('should run each command once, whatever the number of workers', async (t) => {
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port, workers: 2, stateDirectory: 'state' })
    const configBefore = await fs.readFile(site.configFile, 'utf8')
    const stateFile = path.join(site.dir, 'state', 'blocklist.json')
    const svr = await startSvrOnTty(t, site.configFile)
    const get = () => request(port, '/')

    let mark = svr.output.length
    svr.type('help')
    await svr.waitFor(/unblock <ip\|cidr>/, 5000, mark)
    await svr.waitFor(/clear the screen/, 5000, mark)
    assert.equal(svr.output.slice(mark).split('Commands:').length - 1, 1, 'help printed once')

    mark = svr.output.length
    svr.type('block 127.0.0.1')
    await svr.waitFor(/blocked: 127\.0\.0\.1/, 5000, mark)
    assert.equal(svr.output.slice(mark).split('blocked: 127.0.0.1').length - 1, 1)
    // Both workers refuse it: several connections, spread over them.
    for (let i = 0; i < 6; i++) assert.equal((await get()).status, 403)
    assert.deepEqual(JSON.parse(await fs.readFile(stateFile, 'utf8')).blocked, ['127.0.0.1'])

    mark = svr.output.length
    svr.type('unblock 127.0.0.1')
    await svr.waitFor(/unblocked: 127\.0\.0\.1/, 5000, mark)
    for (let i = 0; i < 6; i++) assert.equal((await get()).status, 200)
    assert.deepEqual(JSON.parse(await fs.readFile(stateFile, 'utf8')).blocked, [])

    mark = svr.output.length
    svr.type('block not-an-address')
    await svr.waitFor(/not blocked: not-an-address/, 5000, mark)

    mark = svr.output.length
    svr.type('close')
    await svr.waitFor(/closed: new connections are refused/, 5000, mark)
    await waitFor(async () => (await get().catch((err) => err)).code === 'ECONNREFUSED', 'connections still accepted after close')
    svr.type('open')
    await svr.waitFor(/open: accepting connections/, 5000, mark)
    await waitFor(async () => (await get().catch(() => ({}))).status === 200, 'not accepting after open')

    const oldPids = [...svr.workerPids().values()]
    mark = svr.output.length
    svr.type('restart')
    await svr.waitFor(/reload applied: 2 worker\(s\)/, 20000, mark)
    const newPids = [...svr.workerPids().values()]
    assert.equal(newPids.length, 2)
    for (const pid of newPids) assert.ok(!oldPids.includes(pid), 'worker ' + pid + ' is new')
    assert.equal((await get()).status, 200)

    svr.type('stop')
    const exit = await svr.exited
    assert.equal(exit.code, 0)
    assert.match(svr.output, /shutting down on console "stop"/)
    assert.equal(await fs.readFile(site.configFile, 'utf8'), configBefore, 'config.json is never written')
  })
})

// Two 4.x mods export console commands, as svrjs-cache-mod exports
// `purgecache`: the first hands `purgecache` on with passCommand, and a
// count kept in each worker shows that every worker ran it.
const COMMAND_MODS = {
  '10-counter.js': `
let served = 0
module.exports = (req, res, logFacilities, config, next) => {
  if (req.parsedURL.pathname === '/count') return res.end(String(++served))
  next()
}
module.exports.modInfo = { name: 'counter-mod', version: '1.0' }
module.exports.commands = {
  purgecache: (args, log, passCommand) => {
    log('counter-mod cleared ' + served + ' with ' + JSON.stringify(args))
    served = 0
    passCommand(args, log)
  },
  broken: () => { throw new Error('this command is broken') },
  later: (args, log) => { setTimeout(() => { throw new Error('thrown later') }, 10); log('scheduled') },
  mods: () => { throw new Error('never reached: svr\\'s own "mods" comes first') }
}
`,
  '20-second.js': `
module.exports = (req, res, logFacilities, config, next) => next()
module.exports.modInfo = { name: 'second-mod', version: '2.0' }
module.exports.commands = { purgecache: async (args, log) => { log('second-mod purged too') } }
`
}

describe('console commands of mods', { skip: noScript }, () => {
  it('should run a mod\'s command in every worker, chained, with its errors contained', async (t) => {
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port, workers: 2 })
    await fs.mkdir(path.join(site.dir, 'mods'))
    for (const [name, source] of Object.entries(COMMAND_MODS)) await fs.writeFile(path.join(site.dir, 'mods', name), source)
    const svr = await startSvrOnTty(t, site.configFile)
    const pids = [...svr.workerPids().values()]

    let mark = svr.output.length
    svr.type('help')
    await svr.waitFor(/Commands of mods:\n {2}purgecache {13}from counter-mod, second-mod\n {2}broken {17}from counter-mod\n {2}later {18}from counter-mod\n/, 20000, mark)
    assert.doesNotMatch(svr.output.slice(mark), /never reached/)

    for (let i = 0; i < 4; i++) await request(port, '/count')
    mark = svr.output.length
    svr.type('purgecache /images')
    // Four answer lines, with whatever the terminal puts between them (an
    // access-log line flushed meanwhile, a prompt redrawn).
    await svr.waitFor(/(?:worker \d: [^\n]*\n[\s\S]*?){4}/, 20000, mark)
    const lines = [...svr.output.slice(mark).matchAll(/worker \d: [^\r\n]*/g)].map((match) => match[0]).sort()
    assert.equal(lines.length, 4)
    assert.match(lines[0], /^worker 1: counter-mod cleared \d with \["\/images"\]$/)
    assert.equal(lines[1], 'worker 1: second-mod purged too')
    assert.match(lines[2], /^worker 2: counter-mod cleared \d with \["\/images"\]$/)
    assert.equal(lines[3], 'worker 2: second-mod purged too')
    const cleared = lines.filter((line) => line.includes('cleared')).map((line) => Number(/cleared (\d)/.exec(line)[1]))
    assert.equal(cleared[0] + cleared[1], 4, 'between them, the workers had served the 4 requests')
    assert.equal((await request(port, '/count')).body, '1', 'the count starts again')

    mark = svr.output.length
    svr.type('broken')
    await svr.waitFor(/worker 1: command "broken" of counter-mod failed: Error: this command is broken/, 20000, mark)
    svr.type('later')
    await svr.waitFor(/command "later" of counter-mod failed: Error: thrown later/, 20000, mark)
    svr.type('mods')
    await svr.waitFor(/1\. counter-mod 1\.0\n2\. second-mod 2\.0/, 20000, mark)
    assert.equal((await request(port, '/count')).status, 200)
    assert.deepEqual([...svr.workerPids().values()], pids, 'no worker was replaced')
    assert.doesNotMatch(svr.output, /worker exits|never reached/)
  })

  it('should run them in the one process of --single-threaded, and in the worker a reload started', async (t) => {
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port })
    await fs.mkdir(path.join(site.dir, 'mods'))
    for (const [name, source] of Object.entries(COMMAND_MODS)) await fs.writeFile(path.join(site.dir, 'mods', name), source)
    const svr = await startSvrOnTty(t, site.configFile, ['--single-threaded'])
    for (let i = 0; i < 3; i++) await request(port, '/count')
    let mark = svr.output.length
    svr.type('purgecache')
    // The last request's access-log line may come between the two mods' lines.
    await svr.waitFor(/\ncounter-mod cleared 3 with \[\]\n(?:.*\n)*?second-mod purged too\n/, 20000, mark)
    svr.type('restart')
    await svr.waitFor(/reload applied/, 20000, mark)
    await request(port, '/count')
    mark = svr.output.length
    svr.type('purgecache again')
    await svr.waitFor(/\ncounter-mod cleared 1 with \["again"\]\n(?:.*\n)*?second-mod purged too\n/, 20000, mark)
  })
})

describe('console in --single-threaded mode', { skip: noScript }, () => {
  it('should block, close, open and stop the one process', async (t) => {
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port })
    const svr = await startSvrOnTty(t, site.configFile, ['--single-threaded'])
    let mark = svr.output.length
    svr.type('block 127.0.0.1')
    await svr.waitFor(/blocked: 127\.0\.0\.1/, 5000, mark)
    await svr.waitFor(/"stateDirectory" is not set/, 5000, mark)
    assert.equal((await request(port, '/')).status, 403)
    svr.type('unblock 127.0.0.1')
    await svr.waitFor(/unblocked: 127\.0\.0\.1/, 5000, mark)
    assert.equal((await request(port, '/')).status, 200)
    mark = svr.output.length
    svr.type('close')
    await svr.waitFor(/closed: /, 5000, mark)
    await assert.rejects(request(port, '/'), { code: 'ECONNREFUSED' })
    svr.type('open')
    await svr.waitFor(/open: accepting connections/, 5000, mark)
    assert.equal((await request(port, '/')).status, 200)
    svr.type('stop')
    assert.equal((await svr.exited).code, 0)
  })
})

describe('console blocks kept in stateDirectory', () => {
  it('should apply the saved list at start, without a terminal', async (t) => {
    const site = await makeSite(t, { workers: 1, stateDirectory: 'state' })
    await fs.mkdir(path.join(site.dir, 'state'))
    await fs.writeFile(path.join(site.dir, 'state', 'blocklist.json'), JSON.stringify({ blocked: ['127.0.0.0/8', 'junk'] }))
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/')).status, 403)
    assert.match(svr.output, /skipping "junk"/)
  })
})

async function waitFor (check, message, timeout = 5000) {
  const deadline = Date.now() + timeout
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
