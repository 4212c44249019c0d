'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { agentGet } = require('../helpers/http')

// /pid names the worker; /busy holds its worker's event loop, so that
// connections opened meanwhile can only go to the other one. The test waits
// for /busy's head rather than for a fixed time, which a loaded machine can
// outlast.
const SCRIPT = `
if (href === '/pid') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(String(process.pid))
  return
}
if (href === '/busy') {
  // The answer's start goes out first (at the end of this tick), so the
  // client knows when this worker is busy; the loop runs in the next.
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write(String(process.pid))
  setImmediate(function () {
    var until = Date.now() + 1500
    while (Date.now() < until) {}
    res.end()
  })
  return
}
`
const CONNECTIONS = 8
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function get (port, agent, target) {
  return agentGet(port, target, agent).then((res) => ({ pid: res.body, socket: res.socket }))
}

// GET /busy on `agent`: `started` once its head is in (its worker is then
// busy), `done` with the answer as get() gives it.
function busy (port, agent) {
  let started
  const done = new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/busy', agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.once('data', () => started())
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ pid: body, socket: req.socket }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
  return { started: new Promise((resolve) => { started = resolve }), done }
}

// Connections per worker, each connection counted once, by the pid that
// answered on it last.
function spread (answers) {
  const bySocket = new Map(answers.map((answer) => [answer.socket, answer.pid]))
  const counts = new Map()
  for (const pid of bySocket.values()) counts.set(pid, (counts.get(pid) || 0) + 1)
  return counts
}

describe('connection balance between workers', () => {
  const cleanups = []
  const hooks = { after: (fn) => cleanups.push(fn) }
  let port

  before(async () => {
    const site = await makeSite(hooks, { workers: 2, enableLogging: false })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    port = (await startSvr(hooks, site.configFile)).port
  })

  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
  })

  it('should move keep-alive connections off a worker that holds more than its share', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })
    after(() => agent.destroy())
    // One worker is held up by the first connection, so the other accepts
    // all the rest: 1 against 7.
    const held = busy(port, agent)
    await held.started
    const crowd = await Promise.all(Array.from({ length: CONNECTIONS - 1 }, () => get(port, agent, '/pid')))
    const first = await held.done
    const start = spread([first, ...crowd])
    assert.equal(start.size, 2, 'both workers answered')
    assert.equal(Math.max(...start.values()), CONNECTIONS - 1, 'the crowd went to one worker')
    // Keep every connection busy; the crowded worker hands connections back
    // (Connection: close) until it holds no more than its share.
    let counts = start
    const deadline = Date.now() + 8000
    while (Date.now() < deadline) {
      counts = spread(await Promise.all(Array.from({ length: CONNECTIONS }, () => get(port, agent, '/pid'))))
      if (counts.size === 2 && Math.max(...counts.values()) <= CONNECTIONS / 2 + 1) break
      await sleep(50)
    }
    assert.equal(counts.size, 2)
    assert.ok(Math.max(...counts.values()) <= CONNECTIONS / 2 + 1, 'spread: ' + [...counts.values()].join('/'))
  })
})
