'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { makeCertificate, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')

// /pid names the worker that answers.
const SCRIPT = `
if (href === '/pid') {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(process.pid).length })
  res.end(String(process.pid))
  return
}
`
const SESSIONS = 40
const ROUNDS = 5
// On an idle machine the busiest of two workers holds at most 60 % of a
// burst (bench/spread.js). Here other test files run at once on the same
// cores: a worker may not run for a moment, the one that does rightly keeps
// what the other cannot take, and the workers learn of each other's
// connections from reports a few ms old (a CI run saw 13/7 and 15/5 of 20,
// a loaded one 34/6 of 40). So the bound is 75 %, and two rounds in ROUNDS
// may miss it; without passing on, bursts split 50/0 now and then. Passing
// turned off is caught for certain by the Node-internals test.
const MOST = Math.floor(SESSIONS * 0.75)
const MISSED_ROUNDS = 2

/** Fail unless in all rounds but MISSED_ROUNDS both workers took part and the busiest stayed within MOST. */
function assertSpread (spreads) {
  const what = JSON.stringify(spreads)
  assert.equal(spreads.length, ROUNDS)
  const missed = spreads.filter((spread) => spread.length !== 2 || spread[0] > MOST).length
  assert.ok(missed <= MISSED_ROUNDS, 'both workers hold sessions and the busiest at most ' + MOST + ' in all rounds but ' + MISSED_ROUNDS + ': ' + what)
}

// Between rounds: the workers tell each other (through the primary) that
// the last round's connections closed, within a few ms of it; and after
// the start, that they are there at all.
function settle () {
  return new Promise((resolve) => setTimeout(resolve, 200))
}

/** @returns {number[]} the sessions each worker holds, most first */
function counts (pids) {
  const byPid = new Map()
  for (const pid of pids) byPid.set(pid, (byPid.get(pid) || 0) + 1)
  return [...byPid.values()].sort((a, b) => b - a)
}

// One HTTP/1.1 request on a fresh connection that stays open until the
// whole burst has been answered (each connection is one worker's while it lives).
function rawPid (port, sockets) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    sockets.push(socket)
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      text += chunk
      const at = text.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(text)
      if (at !== -1 && length !== null && text.length >= at + 4 + Number(length[1])) {
        resolve({ pid: text.slice(at + 4, at + 4 + Number(length[1])) })
      }
    })
    socket.on('error', reject)
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer')))
    socket.write('GET /pid HTTP/1.1\r\nHost: localhost\r\n\r\n')
  })
}

describe('connections spread over the workers', () => {
  const scope = createScope()
  let h2
  let plain
  before(async () => {
    const tlsSite = await makeSite(scope, {})
    const cert = await makeCertificate(tlsSite.dir, 'main')
    await fs.writeFile(path.join(tlsSite.dir, 'serverSideScript.js'), SCRIPT)
    await tlsSite.writeConfig(http2SiteConfig(cert, { workers: 2 }))
    const plainSite = await makeSite(scope, { workers: 2 })
    await fs.writeFile(path.join(plainSite.dir, 'serverSideScript.js'), SCRIPT)
    ;[h2, plain] = await Promise.all([startSvr(scope, tlsSite.configFile), startSvr(scope, plainSite.configFile)])
  })
  after(() => scope.cleanup())

  it('should give each of two workers about half of ' + SESSIONS + ' HTTP/2 sessions opened at once, every time', async () => {
    await settle()
    const spreads = []
    for (let round = 0; round < ROUNDS; round++) {
      const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => connectH2(h2.port)))
      try {
        const answers = await Promise.all(sessions.map((session) => h2Request(session, { ':path': '/pid' })))
        assert.deepEqual(answers.map((answer) => answer.status), Array(SESSIONS).fill(200))
        spreads.push(counts(answers.map((answer) => answer.body.toString())))
      } finally {
        for (const session of sessions) session.close()
      }
      await settle()
    }
    assertSpread(spreads)
  })

  it('should spread a burst of HTTP/1.1 connections the same way', async () => {
    const spreads = []
    for (let round = 0; round < ROUNDS; round++) {
      const sockets = []
      try {
        const answers = await Promise.all(Array.from({ length: SESSIONS }, () => rawPid(plain.port, sockets)))
        spreads.push(counts(answers.map((answer) => answer.pid)))
      } finally {
        for (const socket of sockets) socket.destroy()
      }
      await settle()
    }
    assertSpread(spreads)
  })
})
