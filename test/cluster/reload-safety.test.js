'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request, requestPastStopped } = require('../helpers/http')
const { freePorts } = require('../helpers/tools')

// Long enough that a worker boots and answers a request well within it,
// so that the checks below that depend on it being still under way are
// conclusive on an ordinary machine (on a stalled one they are skipped,
// never failed).
const WARM_UP_MS = 3000
// Log lines are waited for this long: a loaded machine is slow, not wrong.
const LINE_MS = 30000

/**
 * A module script that tells which worker answered (X-Pid), and throws at
 * load while `marker` exists, as an application that cannot start does.
 * @param {string} marker
 * @returns {string}
 */
function pidScript (marker) {
  return 'if (require("node:fs").existsSync(' + JSON.stringify(marker) + ')) throw new Error("broken at load")\n' +
    'module.exports = (req, res, next) => {\n' +
    '  res.setHeader("X-Pid", String(process.pid))\n' +
    '  next()\n' +
    '}\n'
}

/** A site whose responses say the configuration's generation and the worker's pid. */
async function generationSite (t, workers, extra = {}) {
  const config = (generation, more = {}) => ({
    workers,
    serverSideScriptFormat: 'module',
    customHeaders: { 'X-Generation': String(generation) },
    ...extra,
    ...more
  })
  const site = await makeSite(t, config(0))
  const marker = path.join(site.dir, 'broken')
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), pidScript(marker))
  return { ...site, marker, config }
}

/** @returns {Promise<number>} the pid of the slot's next worker to come up after output offset `from` */
async function upPid (svr, slot, from) {
  const match = await svr.waitFor(new RegExp('worker ' + slot + ' up \\(pid (\\d+)\\)'), LINE_MS, from)
  return Number(match[1])
}

function retired (svr, slot, pid, from) {
  return svr.waitFor(new RegExp('worker ' + slot + ' \\(pid ' + pid + '\\) retired'), LINE_MS, from)
}

function signalPid (pid, name) {
  try {
    process.kill(pid, name)
  } catch {
    // Gone already; nothing to signal.
  }
}

/**
 * Stop a worker (SIGSTOP) so that it accepts nothing: the workers share
 * one accept queue, so every new connection goes to the others. It is
 * continued after the test whatever happens.
 * @returns {Promise<() => void>} settles once it is stopped (or gone), with what continues it
 */
async function hold (t, pid) {
  signalPid(pid, 'SIGSTOP')
  const release = () => signalPid(pid, 'SIGCONT')
  t.after(release)
  // The signal takes effect asynchronously; a connection made before
  // could still be accepted by it, and wait for its SIGCONT.
  for (let i = 0; i < 500; i++) {
    const stat = await fs.readFile('/proc/' + pid + '/stat', 'utf8').catch(() => null)
    if (stat === null || /^[Tt]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))) return release
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  assert.fail('worker ' + pid + ' did not stop')
}

/** @returns {Promise<string>} 'connected', or the error code of the connection attempt */
function connectOutcome (port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.setTimeout(5000, () => { socket.destroy(); resolve('timed out') })
    socket.once('connect', () => { socket.destroy(); resolve('connected') })
    socket.once('error', (err) => resolve(err.code))
  })
}

/** @returns {Promise<string>} 'bound', or the error code of listening on the port */
function bindOutcome (port) {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', (err) => resolve(err.code))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve('bound')))
  })
}

describe('rolling reload under faults', () => {
  it('should replace a worker that crashes while the reload is still rolling with one of the new configuration', async (t) => {
    const site = await generationSite(t, 2)
    const svr = await startSvr(t, site.configFile)
    const old = svr.workerPids()
    const mark = svr.output.length
    // The warm-up holds the reload at slot 2 while slot 1 already runs the
    // new configuration.
    await site.writeConfig(site.config(1, { healthReadyDelay: WARM_UP_MS }))
    svr.signal('SIGHUP')
    const fresh1 = await upPid(svr, 1, mark)
    const fresh2 = await upPid(svr, 2, mark)
    const killMark = svr.output.length
    signalPid(fresh1, 'SIGKILL')
    const replacement = await upPid(svr, 1, killMark)
    assert.match(svr.output.slice(killMark), /worker 1 exited unexpectedly \(signal SIGKILL\)/)
    await svr.waitFor(/reload applied|reload failed/, LINE_MS, mark)
    assert.doesNotMatch(svr.output.slice(mark), /reload failed/)
    await retired(svr, 1, old.get(1), mark)
    await retired(svr, 2, old.get(2), mark)
    // Slot 1's replacement is then the only worker that answers.
    const release = await hold(t, fresh2)
    const res = await requestPastStopped(svr.port, '/')
    release()
    assert.equal(res.status, 200)
    assert.equal(res.headers['x-pid'], String(replacement))
    assert.equal(res.headers['x-generation'], '1')
  })

  it('should start another worker of the new configuration when the one a reload started dies during its warm-up', async (t) => {
    const site = await generationSite(t, 1)
    const svr = await startSvr(t, site.configFile)
    const old = svr.workerPids().get(1)
    const mark = svr.output.length
    await site.writeConfig(site.config(1, { healthReadyDelay: WARM_UP_MS }))
    svr.signal('SIGHUP')
    const fresh = await upPid(svr, 1, mark)
    const killMark = svr.output.length
    signalPid(fresh, 'SIGKILL')
    // Left to the dead worker, the slot would have none once the old one
    // retired, and no line would come.
    const second = await upPid(svr, 1, killMark)
    await svr.waitFor(/reload applied|reload failed/, LINE_MS, mark)
    assert.doesNotMatch(svr.output.slice(mark), /reload failed/)
    await retired(svr, 1, old, mark)
    const res = await request(svr.port, '/')
    assert.equal(res.status, 200)
    assert.equal(res.headers['x-pid'], String(second))
    assert.equal(res.headers['x-generation'], '1')
  })
})

describe('the end of a reload', () => {
  it('should say "reload applied" only once no old worker accepts, however late an old one reads its shutdown', async (t) => {
    const site = await generationSite(t, 1)
    const svr = await startSvr(t, site.configFile)
    const old = svr.workerPids().get(1)
    // A worker whose event loop is busy reads the shutdown late, and until
    // then accepts from the shared queue like the new one. Stopped, it
    // reads it only once continued.
    const release = await hold(t, old)
    const mark = svr.output.length
    await site.writeConfig(site.config(1))
    svr.signal('SIGHUP')
    const fresh = await upPid(svr, 1, mark)
    // The line came within a few ms of the new worker's when the primary
    // did not wait for the old one to close its sockets.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    assert.doesNotMatch(svr.output.slice(mark), /reload applied|reload failed/)
    release()
    await svr.waitFor(/reload applied|reload failed/, LINE_MS, mark)
    assert.doesNotMatch(svr.output.slice(mark), /reload failed/)
    for (let i = 0; i < 10; i++) {
      const res = await request(svr.port, '/')
      assert.deepEqual([res.headers['x-generation'], res.headers['x-pid']], ['1', String(fresh)])
    }
    await retired(svr, 1, old, mark)
  })
})

describe('healthReadyDelay on a reload', () => {
  it('should keep the old worker until its replacement has warmed up, the replacement answering 503 starting meanwhile', async (t) => {
    const site = await generationSite(t, 1, { healthPath: '/healthz' })
    const svr = await startSvr(t, site.configFile)
    const old = svr.workerPids().get(1)
    assert.equal((await request(svr.port, '/healthz')).status, 200)
    const mark = svr.output.length
    // The delay is new with this configuration: the old one had none.
    await site.writeConfig(site.config(1, { healthReadyDelay: WARM_UP_MS }))
    const hup = Date.now()
    svr.signal('SIGHUP')
    const fresh = await upPid(svr, 1, mark)
    // Only the new worker answers now.
    const releaseOld = await hold(t, old)
    const early = await requestPastStopped(svr.port, '/healthz')
    // Continued, an old worker already retired closes its sockets, and the
    // reload ends, within a few ms: it must still be serving.
    releaseOld()
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(early.headers['x-generation'], '1')
    // The new worker listened after the SIGHUP: what happened before the
    // delay had passed since then happened within its warm-up.
    if (Date.now() < hup + WARM_UP_MS) {
      assert.deepEqual([early.status, early.body], [503, 'starting\n'])
      assert.doesNotMatch(svr.output.slice(mark), /retired|reload applied/)
    } else {
      t.diagnostic('the machine was too slow to look inside the warm-up')
    }
    await svr.waitFor(/reload applied|reload failed/, LINE_MS, mark)
    assert.doesNotMatch(svr.output.slice(mark), /reload failed/)
    // Once the reload is applied, the replacement reports ready.
    const ready = await request(svr.port, '/healthz')
    assert.deepEqual([ready.status, ready.body, ready.headers['x-generation']], [200, 'ok\n', '1'])
    await retired(svr, 1, old, mark)
    const log = svr.output.slice(mark)
    assert.ok(log.indexOf('worker 1 up (pid ' + fresh + ')') < log.indexOf('worker 1 (pid ' + old + ') retired'), log)
  })
})

describe('listen addresses dropped by a reload (cluster)', () => {
  it('should release a port the new configuration no longer names, so that connections are refused and it can be bound', async (t) => {
    const [first, second] = await freePorts(2)
    const site = await makeSite(t, { port: '127.0.0.1:' + first, workers: 2 })
    const svr = await startSvr(t, site.configFile)
    assert.equal(svr.port, first)
    const old = svr.workerPids()
    const mark = svr.output.length
    await site.writeConfig({ port: '127.0.0.1:' + second, workers: 2 })
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied|reload failed/, LINE_MS, mark)
    assert.doesNotMatch(svr.output.slice(mark), /reload failed/)
    await svr.waitFor(new RegExp('listening on http://127\\.0\\.0\\.1:' + second + '\\b'), LINE_MS, mark)
    // The old workers hold their own descriptors until they are gone.
    await retired(svr, 1, old.get(1), mark)
    await retired(svr, 2, old.get(2), mark)
    assert.equal((await request(second, '/')).status, 200)
    assert.equal(await connectOutcome(first), 'ECONNREFUSED')
    assert.equal(await bindOutcome(first), 'bound')
    assert.equal((await request(second, '/')).status, 200)
  })
})

describe('crash-loop back-off', () => {
  it('should back off a slot whose worker cannot start, report the loop, and start afresh after a worker that served', async (t) => {
    // crashLoopWindow 0: only exits before ready count towards a loop.
    const site = await generationSite(t, 1, { crashLoopWindow: 0, metricsPath: '/metrics' })
    const svr = await startSvr(t, site.configFile)
    await fs.writeFile(site.marker, '')
    let mark = svr.output.length
    signalPid(svr.workerPids().get(1), 'SIGKILL')
    await svr.waitFor(/worker slot 1 keeps crashing/, LINE_MS, mark)
    const loop = svr.output.slice(mark)
    await fs.rm(site.marker)
    assert.match(loop, /^.*worker 1 exited unexpectedly \(signal SIGKILL\) after serving longer than crashLoopWindow; replacing it now$/m)
    const delays = [...loop.matchAll(/worker 1 exited unexpectedly \(code 1\) before it was ready; replacing it (now|in (\d+) ms)/g)].map((m) => Number(m[2] || 0))
    // A stalled test may see one more attempt, after the report.
    assert.deepEqual(delays.slice(0, 5), [0, 100, 200, 400, 800])
    assert.match(loop, /worker slot 1 keeps crashing \(5 exits in a row\); next attempt in 800 ms/)
    await upPid(svr, 1, mark)
    // One more attempt may have failed while the marker went away.
    const boots = svr.output.slice(mark).match(/before it was ready; replacing it/g).length
    const metrics = (await request(svr.port, '/metrics')).body
    assert.match(metrics, new RegExp('^svr_worker_restarts_total\\{reason="boot"\\} ' + boots + '$', 'm'))
    assert.match(metrics, /^svr_worker_restarts_total\{reason="served"\} 1$/m)
    assert.match(metrics, /^svr_worker_restarts_total\{reason="early"\} 0$/m)
    // A worker that served ends the streak: its exit is no part of a loop.
    await fs.writeFile(site.marker, '')
    mark = svr.output.length
    signalPid(svr.workerPids().get(1), 'SIGKILL')
    await svr.waitFor(/worker 1 exited unexpectedly \(code 1\) before it was ready; replacing it in 100 ms/, LINE_MS, mark)
    await fs.rm(site.marker)
    const again = svr.output.slice(mark)
    assert.match(again, /worker 1 exited unexpectedly \(signal SIGKILL\) after serving longer than crashLoopWindow; replacing it now/)
    assert.match(again, /worker 1 exited unexpectedly \(code 1\) before it was ready; replacing it now/)
    await upPid(svr, 1, mark)
    assert.equal((await request(svr.port, '/')).status, 200)
  })
})
