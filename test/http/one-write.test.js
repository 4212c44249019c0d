'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')
const { skipWithout, requireTools } = require('../helpers/tools')

const SCRIPT = `if (href === '/hello') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end('Hello World')
  return
}
`
// The system calls that can put bytes on a socket.
const WRITES = 'write,writev,sendto,sendmsg'
// `writev(7, [...], 3) = 1412`: the descriptor and what the call wrote.
const CALL = /^\d+\s+(write|writev|sendto|sendmsg)\((\d+), (.*) = (\d+)$/

/**
 * Trace a process's socket writes while `work` runs. strace attaches to
 * every thread at its own pace, so probe requests go first until one of
 * their answers shows in the trace.
 * @param {string} dir where the trace goes
 * @param {number} pid
 * @param {number} port
 * @param {() => Promise<void>} work
 * @returns {Promise<{call: string, fd: number, args: string, bytes: number}[]>}
 */
async function traceWrites (dir, pid, port, work) {
  const file = path.join(dir, 'strace.txt')
  const strace = spawn('strace', ['-f', '-qq', '-e', 'trace=' + WRITES, '-s', '128', '-o', file, '-p', String(pid)], { stdio: 'ignore' })
  try {
    await waitUntilTraced(file, port)
    await work()
    // Let the last write reach the file.
    await new Promise((resolve) => setTimeout(resolve, 200))
  } finally {
    strace.kill('SIGINT')
    await new Promise((resolve) => strace.once('exit', resolve))
  }
  const calls = []
  for (const line of (await fs.readFile(file, 'utf8')).split('\n')) {
    const m = CALL.exec(line)
    if (m !== null) calls.push({ call: m[1], fd: Number(m[2]), args: m[3], bytes: Number(m[4]) })
  }
  return calls
}

async function waitUntilTraced (file, port) {
  for (let i = 0; i < 100; i++) {
    const probe = await rawRequest(port, 'HEAD /1k.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    const trace = await fs.readFile(file, 'utf8').catch(() => '')
    if (trace.includes(probe.headers['x-request-id'])) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('strace did not attach')
}

describe('small answers over HTTP/1.1', { skip: skipWithout('strace') }, () => {
  const scope = createScope()
  let site
  let svr

  before(async () => {
    if (!requireTools(null, 'strace')) return
    site = await makeSite(scope, { enableLogging: false }, { '1k.html': 'k'.repeat(1024) })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    svr = await startSvr(scope, site.configFile, { args: ['--single-threaded'] })
  })
  after(() => scope.cleanup())

  for (const [name, target, status] of [
    ['a held static file', '/1k.html', 200],
    ['an error page', '/missing', 404],
    ['a script\'s chunked answer', '/hello', 200]
  ]) {
    it('should leave in one socket write, head and body: ' + name, async () => {
      let answer
      const calls = await traceWrites(site.dir, svr.child.pid, svr.port, async () => {
        answer = await rawRequest(svr.port, 'GET ' + target + ' HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
      })
      assert.equal(answer.status, status)
      // X-Request-Id is the first header, within what strace shows of a call.
      const id = answer.headers['x-request-id']
      const response = calls.filter((c) => c.args.includes('HTTP/1.1 ' + status) && c.args.includes(id))
      assert.equal(response.length, 1, 'one call starts the response: ' + JSON.stringify(calls))
      // From the answer on (a probe's connection closed before may have had the same descriptor).
      const fd = response[0].fd
      const onSocket = calls.slice(calls.indexOf(response[0])).filter((c) => c.fd === fd)
      assert.equal(onSocket.length, 1, 'no other write on the socket: ' + JSON.stringify(onSocket))
      assert.equal(response[0].bytes, Buffer.byteLength(answer.raw, 'latin1'))
    })
  }
})
