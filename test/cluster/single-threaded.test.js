'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const http2 = require('node:http2')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request, agentGet } = require('../helpers/http')
const { clientLoop } = require('../helpers/client-loop')
const { freePort } = require('../helpers/tools')
const { makeCertificate, httpsRequest } = require('../helpers/tls')

const SINGLE = { args: ['--single-threaded'] }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const version = (text) => "if (href === '/version') { res.end('" + text + "'); return }\n"
// /slow answers its head and first line at once and the rest a second later.
const SLOW_SCRIPT = `if (href === '/slow') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write('started\\n')
  setTimeout(() => res.end('finished\\n'), 1000)
  return
}
`

/** numbers of the "in-process worker #N up (pid P)" lines, in order */
function inProcessUps (output) {
  return [...output.matchAll(/in-process worker #(\d+) up \(pid (\d+)\)/g)].map((match) => Number(match[1]))
}

function h2Get (port, target) {
  return new Promise((resolve, reject) => {
    const client = http2.connect('https://127.0.0.1:' + port, { rejectUnauthorized: false, servername: 'localhost' })
    client.once('error', reject)
    const stream = client.request({ ':path': target })
    let status = null
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (headers) => { status = headers[':status'] })
    stream.on('data', (chunk) => { body += chunk })
    stream.on('end', () => {
      client.close()
      resolve({ status, body })
    })
    stream.on('error', reject)
  })
}

describe('--single-threaded reload: a new in-process worker replaces the old one', () => {
  it('should reload under keep-alive and new-connection clients without a failed request, then answer with the new configuration', async (t) => {
    // Log files make the new worker's boot wait for the disk, as in production.
    const config = (generation) => ({ logDirectory: 'logs', customHeaders: { 'X-Generation': generation } })
    const site = await makeSite(t, config('0'))
    const script = path.join(site.dir, 'serverSideScript.js')
    await fs.writeFile(script, version('0'))
    const svr = await startSvr(t, site.configFile, SINGLE)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })
    t.after(() => agent.destroy())
    const loops = [clientLoop(svr.port, '/version', { agent }), clientLoop(svr.port, '/version', { agent })]
    for (let i = 0; i < 4; i++) loops.push(clientLoop(svr.port, '/version'))
    t.after(() => Promise.all(loops.map((loop) => loop.stop())))
    await sleep(200)
    for (const generation of ['1', '2', '3']) {
      const mark = svr.output.length
      await fs.writeFile(script, version(generation))
      await site.writeConfig(config(generation))
      svr.signal('SIGHUP')
      await svr.waitFor(/reload applied/, 15000, mark)
      // The new worker was up before the old one retired.
      const old = Number(generation)
      await svr.waitFor(new RegExp('in-process worker #' + old + ' \\(pid \\d+\\) retired'), 15000, mark)
      const log = svr.output.slice(mark)
      const up = log.indexOf('in-process worker #' + (old + 1) + ' up')
      assert.equal(up !== -1 && up < log.indexOf('in-process worker #' + old + ' (pid'), true, log)
      await sleep(100)
    }
    await Promise.all(loops.map((loop) => loop.stop()))
    assert.deepEqual(loops.flatMap((loop) => loop.stats.errors), [])
    for (const loop of loops) assert.ok(loop.stats.ok > 0)
    const bodies = new Set(loops.flatMap((loop) => [...loop.stats.bodies]))
    assert.deepEqual([...bodies].sort(), ['0', '1', '2', '3'])
    assert.equal(inProcessUps(svr.output).length, 4, 'each reload started a worker')
    const after = await request(svr.port, '/version')
    assert.equal(after.body, '3')
    assert.equal(after.headers['x-generation'], '3')
    assert.equal(svr.workerPids().size, 0, 'no cluster worker')
  })

  it('should move to a new port on reload and let go of the old one', async (t) => {
    const [first, second] = [await freePort(), await freePort()]
    const site = await makeSite(t, { port: '127.0.0.1:' + first })
    const svr = await startSvr(t, site.configFile, SINGLE)
    assert.equal(svr.port, first)
    const mark = svr.output.length
    await site.writeConfig({ port: '127.0.0.1:' + second })
    svr.signal('SIGHUP')
    await svr.waitFor(new RegExp('listening on http://127\\.0\\.0\\.1:' + second), 15000, mark)
    await svr.waitFor(/reload applied/, 15000, mark)
    assert.equal((await request(second, '/')).body, '<h1>test index</h1>\n')
    await assert.rejects(request(first, '/'), { code: 'ECONNREFUSED' })
    assert.doesNotMatch(svr.output, /needs a restart/)
  })

  it('should turn secure on (HTTPS, HTTP/2 and the plain redirect) and off again on reload', async (t) => {
    const [port, sport] = [await freePort(), await freePort()]
    const site = await makeSite(t, { port: '127.0.0.1:' + port })
    const cert = await makeCertificate(site.dir, 'single')
    const svr = await startSvr(t, site.configFile, SINGLE)
    let mark = svr.output.length
    await site.writeConfig({ port: '127.0.0.1:' + port, secure: true, sport: '127.0.0.1:' + sport, spubport: sport, enableHTTP2: true, cert: cert.cert, key: cert.key })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    const https1 = await httpsRequest(sport, '/')
    assert.equal(https1.status, 200)
    assert.equal(https1.fingerprint, cert.fingerprint)
    assert.deepEqual(await h2Get(sport, '/'), { status: 200, body: '<h1>test index</h1>\n' })
    const redirect = await request(port, '/x?y')
    assert.equal(redirect.status, 301)
    assert.equal(redirect.headers.location, 'https://127.0.0.1:' + sport + '/x?y')

    mark = svr.output.length
    await site.writeConfig({ port: '127.0.0.1:' + port })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    assert.equal((await request(port, '/')).status, 200)
    await assert.rejects(httpsRequest(sport, '/'), { code: 'ECONNREFUSED' })
  })

  it('should serve a unix socket across a reload', async (t) => {
    const site = await makeSite(t)
    const socketPath = path.join(site.dir, 'svr.sock')
    await site.writeConfig({ port: socketPath, customHeaders: { 'X-Generation': 'one' } })
    const svr = await startSvr(t, site.configFile, SINGLE)
    assert.equal((await request(0, '/', { socketPath })).headers['x-generation'], 'one')
    const mark = svr.output.length
    await site.writeConfig({ port: socketPath, customHeaders: { 'X-Generation': 'two' } })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    assert.equal((await request(0, '/', { socketPath })).headers['x-generation'], 'two')
  })

  it('should let a request in flight finish on the old worker, which retires after it', async (t) => {
    const site = await makeSite(t)
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SLOW_SCRIPT)
    const svr = await startSvr(t, site.configFile, SINGLE)
    const mark = svr.output.length
    const slow = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: svr.port, path: '/slow', agent: false }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        // What svr had logged when the response ended.
        const whole = new Promise((resolve) => res.on('end', () => resolve({ body, log: svr.output.slice(mark) })))
        res.on('data', (chunk) => { body += chunk })
        resolve({ status: res.statusCode, whole })
      }).on('error', reject)
    })
    assert.equal(slow.status, 200)
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    const { body, log } = await slow.whole
    assert.equal(body, 'started\nfinished\n')
    assert.match(log, /reload applied/)
    assert.doesNotMatch(log, /retired/)
    await svr.waitFor(/in-process worker #1 \(pid \d+\) retired/, 15000, mark)
    assert.equal((await request(svr.port, '/')).status, 200)
  })

  it('should count the connections it was handed, and close idle ones when it drains', async (t) => {
    // A minute of keep-alive: only the drain can close the idle connection in time.
    const site = await makeSite(t, { metricsPath: '/metrics', keepAliveTimeout: 60000 })
    const svr = await startSvr(t, site.configFile, SINGLE)
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 })
    t.after(() => agent.destroy())
    const idle = await Promise.all([agentGet(svr.port, '/', agent), agentGet(svr.port, '/', agent)])
    assert.notEqual(idle[0].socket, idle[1].socket)
    const metrics = await request(svr.port, '/metrics')
    assert.match(metrics.body, /^svr_http_connections_active\{worker="single"\} 3$/m)
    const closed = idle.map(({ socket }) => new Promise((resolve) => socket.once('close', resolve)))
    const mark = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 15000, mark)
    await svr.waitFor(/in-process worker #1 \(pid \d+\) retired/, 10000, mark)
    await Promise.all(closed)
    const after = await request(svr.port, '/metrics')
    assert.match(after.body, /^svr_http_connections_active\{worker="single"\} 1$/m)
    assert.match(after.body, /^svr_reloads_total\{result="applied"\} 1$/m)
  })

  it('should stop with exit code 1 on an uncaught exception outside a request, having nobody to replace it', async (t) => {
    const site = await makeSite(t, { serverSideScriptFormat: 'module' })
    // Thrown by a timer the script starts when it loads: no request is in flight.
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'),
      "setTimeout(() => { throw new Error('boom outside a request') }, 300)\nmodule.exports = (req, res, next) => next()\n")
    const svr = await startSvr(t, site.configFile, SINGLE)
    assert.equal((await svr.exited).code, 1)
    assert.match(svr.output, /uncaught exception, stopping: Error: boom outside a request/)
  })
})
