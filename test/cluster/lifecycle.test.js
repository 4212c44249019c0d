'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const net = require('node:net')
const fs = require('node:fs/promises')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { once } = require('node:events')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request, agentGet } = require('../helpers/http')
const { clientLoop } = require('../helpers/client-loop')
const { freePort } = require('../helpers/tools')

// /slow answers its head and first line at once and the rest a second
// later, so that a stop can begin while it is in flight.
const SLOW_SCRIPT = `if (href === '/slow') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write('started\\n')
  setTimeout(() => res.end('finished\\n'), 1000)
  return
}
`

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once a new connection to `port` is refused: svr has begun to drain. */
async function untilRefused (port, timeout = 5000) {
  for (const deadline = Date.now() + timeout; ;) {
    if (Date.now() > deadline) throw new Error('connections still accepted ' + timeout + ' ms after SIGTERM')
    const refused = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(false) })
      socket.once('error', (err) => resolve(err.code === 'ECONNREFUSED'))
    })
    if (refused) return
    await sleep(10)
  }
}

/**
 * GET /slow and resolve once its first line has come, with a promise of
 * the whole body.
 */
function startSlowRequest (port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/slow', agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      const whole = new Promise((resolve, reject) => {
        res.on('end', () => resolve(body))
        res.on('error', reject)
        res.on('aborted', () => reject(new Error('aborted after ' + JSON.stringify(body))))
      })
      whole.catch(() => {})
      res.once('data', () => resolve({ status: res.statusCode, whole }))
      res.on('data', (chunk) => { body += chunk })
    })
    req.on('error', reject)
  })
}

describe('cluster lifecycle', () => {
  it('should fork the configured number of workers and serve the webroot', async (t) => {
    const site = await makeSite(t, { workers: 2 })
    const svr = await startSvr(t, site.configFile)
    assert.equal(svr.workerPids().size, 2)
    const res = await request(svr.port, '/')
    assert.equal(res.status, 200)
    assert.equal(res.body, '<h1>test index</h1>\n')
  })

  it('should replace a killed worker while the other keeps serving', async (t) => {
    const site = await makeSite(t, { workers: 2 })
    const svr = await startSvr(t, site.configFile)
    const before = svr.workerPids()
    const mark = svr.output.length
    process.kill(before.get(1), 'SIGKILL')
    const loop = clientLoop(svr.port, '/')
    const started = Date.now()
    const match = await svr.waitFor(/worker 1 up \(pid (\d+)\)/, 2000, mark)
    assert.notEqual(Number(match[1]), before.get(1))
    assert.ok(Date.now() - started < 2000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await loop.stop()
    assert.ok(loop.stats.ok > 0, 'the surviving worker answered')
    // A connection handed to the dead worker must not leave its client hanging.
    assert.deepEqual(loop.stats.errors.filter((e) => /timed out/.test(e)), [])
    assert.match(svr.output.slice(mark), /worker 1 exited unexpectedly \(signal SIGKILL\)/)
    const res = await request(svr.port, '/')
    assert.equal(res.status, 200)
  })

  it('should let an in-flight request finish on SIGTERM and exit 0', async (t) => {
    const big = Buffer.alloc(32 * 1024 * 1024, 'x')
    const site = await makeSite(t, { workers: 1 }, { 'big.bin': big })
    const svr = await startSvr(t, site.configFile)
    const received = await new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: svr.port, path: '/big.bin', agent: false }, (res) => {
        let bytes = 0
        res.pause()
        // Read slowly so the response is still in flight when SIGTERM arrives.
        setTimeout(() => {
          svr.signal('SIGTERM')
          setTimeout(() => {
            res.on('data', (chunk) => { bytes += chunk.length })
            res.on('end', () => resolve(bytes))
            res.resume()
          }, 300)
        }, 100)
      })
      req.on('error', reject)
    })
    assert.equal(received, big.length)
    const exit = await svr.exited
    assert.equal(exit.code, 0)
    assert.match(svr.output, /shutting down on SIGTERM/)
  })

  it('should exit 0 promptly on SIGTERM when idle, and SIGINT likewise', async (t) => {
    for (const signal of ['SIGTERM', 'SIGINT']) {
      const site = await makeSite(t)
      const svr = await startSvr(t, site.configFile)
      const started = Date.now()
      svr.signal(signal)
      const exit = await svr.exited
      assert.equal(exit.code, 0, signal)
      assert.ok(Date.now() - started < 3000, signal + ' took too long')
    }
  })

  it('should apply a changed config on SIGHUP without failing a request', async (t) => {
    const site = await makeSite(t, { workers: 2 }, { 'index.html': 'old site', 'v2/index.html': 'new site' })
    const svr = await startSvr(t, site.configFile)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })
    t.after(() => agent.destroy())
    const loops = [clientLoop(svr.port, '/', { agent }), clientLoop(svr.port, '/')]
    await new Promise((resolve) => setTimeout(resolve, 200))
    const mark = svr.output.length
    await site.writeConfig({ workers: 2, wwwroot: path.join(site.dir, 'webroot', 'v2') })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (const loop of loops) await loop.stop()
    for (const loop of loops) {
      assert.deepEqual(loop.stats.errors, [])
      assert.ok(loop.stats.ok > 10)
    }
    const res = await request(svr.port, '/')
    assert.equal(res.body, 'new site')
    assert.match(svr.output.slice(mark), /worker 1 \(pid \d+\) retired/)
  })

  it('should keep serving the old config when SIGHUP finds a broken one', async (t) => {
    const site = await makeSite(t, { workers: 2 }, { 'index.html': 'old site' })
    const svr = await startSvr(t, site.configFile)
    const mark = svr.output.length
    await fs.writeFile(site.configFile, JSON.stringify({ port: '127.0.0.1:0', workers: 'many' }))
    svr.signal('SIGHUP')
    await svr.waitFor(/reload refused/, 10000, mark)
    assert.match(svr.output.slice(mark), /\/workers/)
    const res = await request(svr.port, '/')
    assert.equal(res.status, 200)
    assert.equal(res.body, 'old site')
  })
})

describe('lifecycle with one worker', () => {
  it('should reload one worker on a fixed port without failing a request of a client that never retries', async (t) => {
    // One worker: no other one can carry the load if the reload retires the
    // old worker before its replacement listens. A fixed port, because a
    // listener on port 0 could come back on another port.
    const port = await freePort()
    const site = await makeSite(t, { port: '127.0.0.1:' + port, workers: 1 }, { 'index.html': 'old site', 'v2/index.html': 'new site' })
    const svr = await startSvr(t, site.configFile)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })
    t.after(() => agent.destroy())
    const loops = [clientLoop(port, '/', { agent }), clientLoop(port, '/')]
    await sleep(200)
    const oldPid = svr.workerPids().get(1)
    const mark = svr.output.length
    await site.writeConfig({ port: '127.0.0.1:' + port, workers: 1, wwwroot: path.join(site.dir, 'webroot', 'v2') })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    await svr.waitFor(new RegExp('worker 1 \\(pid ' + oldPid + '\\) retired'), 15000, mark)
    await sleep(300)
    for (const loop of loops) await loop.stop()
    for (const loop of loops) {
      assert.deepEqual(loop.stats.errors, [])
      assert.ok(loop.stats.ok > 10, `only ${loop.stats.ok} requests`)
    }
    assert.equal((await request(port, '/')).body, 'new site')
  })

  it('should retire the old worker of a reload only once its replacement is up', async (t) => {
    // Clients would not see the difference (they wait in the backlog of the
    // primary's socket), but for the length of a boot nothing would serve.
    // With no connection open, a retired worker exits at once, so its
    // "retired" line comes before the new one's "up" when the order is wrong.
    const site = await makeSite(t, { workers: 1 })
    const svr = await startSvr(t, site.configFile)
    const oldPid = svr.workerPids().get(1)
    const mark = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(new RegExp('worker 1 \\(pid ' + oldPid + '\\) retired'), 15000, mark)
    const newPid = svr.workerPids().get(1)
    assert.notEqual(newPid, oldPid)
    const log = svr.output.slice(mark)
    const up = log.indexOf('worker 1 up (pid ' + newPid + ')')
    const gone = log.indexOf('worker 1 (pid ' + oldPid + ') retired')
    assert.equal(up !== -1 && up < gone, true, log)
  })

  for (const mode of ['cluster', 'single-threaded']) {
    it(`should answer, with Connection: close, a request on an idle keep-alive connection just after the drain began (${mode})`, async (t) => {
      const site = await makeSite(t, { workers: 1 })
      const svr = await startSvr(t, site.configFile, { args: mode === 'cluster' ? [] : ['--single-threaded'] })
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      t.after(() => agent.destroy())
      const first = await agentGet(svr.port, '/', agent)
      assert.equal(first.status, 200)
      assert.equal(first.headers.connection, 'keep-alive')
      svr.signal('SIGTERM')
      await untilRefused(svr.port)
      // The client has not yet seen the drain: its idle connection is still
      // open, and the next request goes on it.
      const next = await agentGet(svr.port, '/', agent)
      assert.equal(next.reused, true)
      assert.equal(next.status, 200)
      assert.equal(next.body, '<h1>test index</h1>\n')
      assert.equal(next.headers.connection, 'close')
      assert.equal((await svr.exited).code, 0)
    })
  }
})

describe('listening', () => {
  it('should exit non-zero with a clear message when the port is in use', async (t) => {
    const blocker = net.createServer()
    await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    t.after(() => blocker.close())
    const { port } = blocker.address()
    const site = await makeSite(t, { port: '127.0.0.1:' + port, workers: 1 })
    const result = await runSvr(['--config', site.configFile], { timeout: 15000 })
    assert.notEqual(result.code, 0)
    // One attempt, not SVR.JS's five retries: a single "cannot listen" line.
    assert.equal(result.stderr.match(/cannot listen on/g).length, 1)
    assert.match(result.stderr, new RegExp('cannot listen on 127\\.0\\.0\\.1:' + port + ': address already in use'))
  })

  it('should listen on a unix socket path and replace a stale socket file', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const socketPath = path.join(site.dir, 'svr.sock')
    // A socket file nobody listens on, as a killed server leaves behind.
    const holder = spawn(process.execPath, ['-e',
      'require("node:net").createServer().listen(process.argv[1], () => console.log("up"))', socketPath])
    await once(holder.stdout, 'data')
    holder.kill('SIGKILL')
    await once(holder, 'exit')
    assert.ok((await fs.lstat(socketPath)).isSocket())
    await site.writeConfig({ workers: 1, port: socketPath })
    const svr = await startSvr(t, site.configFile)
    assert.equal(svr.socketPath, socketPath)
    const res = await request(0, '/', { socketPath })
    assert.equal(res.status, 200)
  })

  it('should accept "[v6]:port" and serve on ::1', async (t) => {
    const site = await makeSite(t, { port: '[::1]:0', workers: 1 })
    const svr = await startSvr(t, site.configFile)
    assert.equal(svr.host, '::1')
    const res = await request(svr.port, '/', { host: '::1' })
    assert.equal(res.status, 200)
  })
})

describe('single-threaded mode', () => {
  it('should serve from one process and stop on SIGTERM', async (t) => {
    const site = await makeSite(t)
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    assert.equal(svr.workerPids().size, 0)
    const res = await request(svr.port, '/')
    assert.equal(res.status, 200)
    svr.signal('SIGTERM')
    assert.equal((await svr.exited).code, 0)
  })

  it('should let a slow request in flight finish on SIGTERM and exit 0', async (t) => {
    const site = await makeSite(t)
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SLOW_SCRIPT)
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    const slow = await startSlowRequest(svr.port)
    assert.equal(slow.status, 200)
    svr.signal('SIGTERM')
    assert.equal(await slow.whole, 'started\nfinished\n')
    assert.equal((await svr.exited).code, 0)
    assert.match(svr.output, /shutting down on SIGTERM/)
  })
})
