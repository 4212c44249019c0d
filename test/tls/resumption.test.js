'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tls = require('node:tls')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { makeCertificate } = require('../helpers/tls')

// Which worker answered: the script tells its process id.
const SCRIPT = "if (href === '/pid') { res.writeHead(200, { 'X-Pid': String(process.pid) }); res.end(); return }\n"

/**
 * One request on a new TLS connection, offering `session` for resumption.
 * @param {number} port
 * @param {{maxVersion: string, session?: Buffer, noTickets?: boolean}} opts
 * @returns {Promise<{pid: number, reused: boolean, session: Buffer}>} the
 *   session to resume next: a TLS 1.3 ticket or 1.2 ticket as the server
 *   sent it, else the 1.2 session (id) itself
 */
function pidOverTls (port, opts) {
  return new Promise((resolve, reject) => {
    let session = null
    let body = ''
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      rejectUnauthorized: false,
      maxVersion: opts.maxVersion,
      minVersion: opts.maxVersion,
      ALPNProtocols: ['http/1.1'],
      session: opts.session,
      secureOptions: opts.noTickets ? crypto.constants.SSL_OP_NO_TICKET : 0
    }, () => {
      socket.write('GET /pid HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    })
    socket.on('session', (data) => { session = data })
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => { body += chunk })
    socket.on('end', () => {
      const reused = socket.isSessionReused()
      const pid = /\r\nx-pid: (\d+)\r\n/i.exec(body)
      resolve({ pid: pid === null ? null : Number(pid[1]), reused, session: session || socket.getSession() })
    })
    socket.on('error', reject)
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer over TLS')))
  })
}

/**
 * Connect until a connection lands on the wanted worker (the workers accept
 * from one queue, so the kernel picks).
 */
async function onWorker (port, pid, opts) {
  for (let tries = 0; tries < 200; tries++) {
    const answer = await pidOverTls(port, opts)
    if (answer.pid === pid) return answer
  }
  throw new Error('no connection reached worker ' + pid)
}

/**
 * Resume `session` on the wanted worker. A session made on one worker
 * reaches the other through the primary a few milliseconds later (a session
 * id by the primary's 'tls-sessions-known'), and a connection may land on
 * that worker before: a full handshake then, and the next one resumes. So
 * the first connection that lands there and resumes counts, within a
 * second; one that never resumes fails the test.
 */
async function resumedOn (port, pid, opts, session) {
  const until = Date.now() + 1000
  let answer
  do {
    answer = await onWorker(port, pid, { ...opts, session })
  } while (!answer.reused && Date.now() < until)
  return answer
}

describe('TLS session resumption across workers', () => {
  const scope = createScope()
  let svr
  let first
  let second
  before(async () => {
    const site = await makeSite(scope)
    const cert = await makeCertificate(site.dir, 'main')
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    await site.writeConfig({
      workers: 2,
      secure: true,
      enableHTTP2: true,
      disableNonEncryptedServer: true,
      sport: '127.0.0.1:0',
      cert: cert.cert,
      key: cert.key
    })
    svr = await startSvr(scope, site.configFile)
    await svr.waitFor(/worker 2 up/)
    ;[first, second] = [svr.workerPids().get(1), svr.workerPids().get(2)]
  })
  after(() => scope.cleanup())

  for (const [label, opts] of [
    ['TLS 1.2 with a session ticket', { maxVersion: 'TLSv1.2' }],
    ['TLS 1.2 with a session id', { maxVersion: 'TLSv1.2', noTickets: true }],
    ['TLS 1.3 with a session ticket', { maxVersion: 'TLSv1.3' }]
  ]) {
    it('should resume a session of one worker on the other: ' + label, async () => {
      const made = await onWorker(svr.port, first, opts)
      assert.equal(made.reused, false)
      const resumed = await resumedOn(svr.port, second, opts, made.session)
      assert.equal(resumed.pid, second)
      assert.equal(resumed.reused, true)
      // And back on the worker that made it.
      const again = await onWorker(svr.port, first, { ...opts, session: made.session })
      assert.equal(again.pid, first)
      assert.equal(again.reused, true)
    })
  }
})
