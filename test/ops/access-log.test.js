'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { parseCombined, waitForLines, holdsOpen, waitUntil } = require('../helpers/access-log')
const { createScope } = require('../helpers/scope')
const { requireTools } = require('../helpers/tools')

const HOSTILE_REQUESTS = 1000
const PARALLEL = 16
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
// What Node's parser lets through in a request target and in a header value.
const TARGET_CHARS = '!"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~'
const HEADER_CHARS = TARGET_CHARS + ' \t' + latin1Range(0x80, 0xff)
// Attempts to forge a line or a field, verbatim.
const FORGERIES = [
  '" 200 1 "-" "-" "x"',
  '\\" 200 1 "-" "-"',
  '\\x22',
  '%0d%0a127.0.0.1 - - [01/Jan/2000:00:00:00 +0000] "GET /fake HTTP/1.1" 200 1',
  '"><script>alert(1)</script>'
]

function latin1Range (from, to) {
  let out = ''
  for (let code = from; code <= to; code++) out += String.fromCharCode(code)
  return out
}

// A fixed seed keeps a failure reproducible.
function createRandom (seed) {
  let state = seed >>> 0
  function next () {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state / 4294967296
  }
  return {
    int: (n) => Math.floor(next() * n),
    pick (chars, length) {
      let out = ''
      for (let i = 0; i < length; i++) out += chars[Math.floor(next() * chars.length)]
      return out
    }
  }
}

function hostileRequest (random, i) {
  const methods = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS']
  const method = methods[random.int(methods.length)]
  let target = '/' + random.pick(TARGET_CHARS, 1 + random.int(60))
  if (i % 10 === 0) target = '/' + FORGERIES[(i / 10) % FORGERIES.length].replace(/ /g, '%20')
  if (i % 7 === 0) target = '/index.html'
  // Header values lose surrounding whitespace in the parser; keep it inside.
  const header = (length) => 'a' + random.pick(HEADER_CHARS, length) + 'z'
  const userAgent = i % 5 === 0 ? undefined : (i % 10 === 1 ? FORGERIES[i % FORGERIES.length] : header(random.int(100)))
  const referer = i % 3 === 0 ? undefined : header(random.int(80))
  let head = method + ' ' + target + ' HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'
  if (userAgent !== undefined) head += 'User-Agent: ' + userAgent + '\r\n'
  if (referer !== undefined) head += 'Referer: ' + referer + '\r\n'
  if (method === 'POST') head += 'Content-Length: 3\r\n\r\nabc'
  else head += '\r\n'
  return { method, target, userAgent, referer, wire: Buffer.from(head, 'latin1') }
}

async function sendAll (port, requests) {
  const answers = new Array(requests.length)
  let next = 0
  async function lane () {
    while (next < requests.length) {
      const index = next++
      answers[index] = await rawRequest(port, requests[index].wire)
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, lane))
  return answers
}

function goaccess (args) {
  return new Promise((resolve) => {
    execFile('goaccess', args, { timeout: 30000 }, (err, stdout, stderr) => resolve({ err, stdout, stderr }))
  })
}

describe('access log in Combined Log Format', () => {
  let site
  let svr
  let sent
  let answers
  let lines
  const scope = createScope()

  before(async () => {
    site = await makeSite(scope, { workers: 1, logDirectory: 'logs' }, { 'index.html': '<h1>index</h1>\n'.repeat(50) })
    svr = await startSvr(scope, site.configFile)
    const random = createRandom(20261123)
    sent = Array.from({ length: HOSTILE_REQUESTS }, (_, i) => hostileRequest(random, i))
    answers = await sendAll(svr.port, sent)
    lines = await waitForLines(path.join(site.dir, 'logs', 'access.log'), HOSTILE_REQUESTS)
  })
  after(() => scope.cleanup())

  it('should write one parseable line per request, with every field as received', () => {
    assert.equal(lines.length, HOSTILE_REQUESTS)
    const byId = new Map()
    sent.forEach((entry, i) => {
      assert.match(answers[i].headers['x-request-id'] || '', UUID, 'request ' + i + ' has a request id')
      byId.set(answers[i].headers['x-request-id'], { entry, answer: answers[i] })
    })
    for (const line of lines) {
      const fields = parseCombined(line)
      assert.notEqual(fields, null, 'not Combined Log Format: ' + line)
      const match = byId.get(fields.requestId)
      assert.ok(match, 'unknown request id in ' + line)
      byId.delete(fields.requestId)
      const { entry, answer } = match
      assert.equal(fields.address, '127.0.0.1')
      assert.equal(fields.request, entry.method + ' ' + entry.target + ' HTTP/1.1')
      assert.equal(fields.userAgent, entry.userAgent === undefined ? '-' : entry.userAgent)
      assert.equal(fields.referer, entry.referer === undefined ? '-' : entry.referer)
      assert.equal(fields.status, answer.status)
      // The raw body is a latin1 string: one character per byte.
      assert.equal(fields.bytes, entry.method === 'HEAD' ? 0 : answer.body.length, line)
    }
    assert.equal(byId.size, 0, 'every request has its line')
  })

  it('should be read by GoAccess (COMBINED) without a single invalid line', async (t) => {
    if (!requireTools(t, 'goaccess')) return
    const report = path.join(site.dir, 'goaccess.json')
    const run = await goaccess([path.join(site.dir, 'logs', 'access.log'), '--no-global-config',
      '--log-format=COMBINED', '-o', report])
    assert.equal(run.err, null, run.stderr)
    const general = JSON.parse(await fs.readFile(report, 'utf8')).general
    assert.equal(general.total_requests, HOSTILE_REQUESTS)
    assert.equal(general.failed_requests, 0)
    assert.equal(general.valid_requests, HOSTILE_REQUESTS)
  })

  it('should count the compressed bytes of a compressed response', async () => {
    const res = await rawRequest(svr.port, 'GET /index.html HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n')
    assert.equal(res.headers['content-encoding'], 'gzip')
    const all = await waitForLines(path.join(site.dir, 'logs', 'access.log'), HOSTILE_REQUESTS + 1)
    const fields = parseCombined(all[all.length - 1])
    assert.equal(fields.requestId, res.headers['x-request-id'])
    assert.ok(fields.bytes < 750, 'compressed, not the 750-byte file')
    // Every byte after the head, chunk framing included if chunked.
    assert.equal(fields.bytes, res.body.length)
  })

  it('should write server events with timestamps to error.log', async () => {
    const events = await fs.readFile(path.join(site.dir, 'logs', 'error.log'), 'utf8')
    assert.match(events, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info \[primary\] listening on http:\/\/127\.0\.0\.1:\d+$/m)
    assert.match(events, /Z info \[primary\] worker 1 up/)
  })
})

describe('access log as JSON lines on stdout', () => {
  it('should write one JSON object per request with every field', async (t) => {
    const site = await makeSite(t, { workers: 1, logFormat: 'json' }, { 'file.txt': 'twelve bytes' })
    const svr = await startSvr(t, site.configFile)
    const userAgent = 'caf\u00e9 "agent" \\ \u2028'
    const res = await request(svr.port, '/file.txt?q="x"', {
      headers: { 'User-Agent': Buffer.from(userAgent).toString('latin1'), Referer: 'http://example.test/' }
    })
    assert.equal(res.status, 200)
    const match = await svr.waitFor(/^\{.*"requestId":"[^"]+".*\}$/m)
    const entry = JSON.parse(match[0])
    assert.equal(entry.requestId, res.headers['x-request-id'])
    assert.equal(entry.method, 'GET')
    assert.equal(entry.target, '/file.txt?q="x"')
    assert.equal(entry.protocol, 'HTTP/1.1')
    assert.equal(entry.status, 200)
    assert.equal(entry.bytes, 12)
    assert.equal(entry.userAgent, userAgent)
    assert.equal(entry.referer, 'http://example.test/')
    assert.equal(entry.address, '127.0.0.1')
    assert.equal(entry.worker, '1')
    assert.equal(entry.completed, true)
    assert.ok(typeof entry.duration === 'number' && entry.duration >= 0)
    assert.ok(Math.abs(Date.parse(entry.time) - Date.now()) < 60000)
    assert.ok(!match[0].includes('\u2028'), 'U+2028 is escaped')
  })
})

describe('the duration in a JSON line', () => {
  // The monotonic clock is read only where the duration is wanted (the
  // combined format has no field for it): the JSON format must want it.
  it('should be the time the response took, in milliseconds', async (t) => {
    const site = await makeSite(t, { workers: 1, logFormat: 'json' })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'),
      "if (href === '/slow') { setTimeout(function () { res.end('late') }, 150); return }\n")
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/slow')
    assert.equal(res.body.toString(), 'late')
    const match = await svr.waitFor(/^\{.*"target":"\/slow".*\}$/m)
    const { duration } = JSON.parse(match[0])
    assert.ok(duration >= 150 && duration < 5000, 'duration ' + duration)
  })
})

describe('requests the parser refuses', () => {
  it('should get an access-log line with the status they were answered', async (t) => {
    const site = await makeSite(t, { workers: 1, logFormat: 'json' })
    const svr = await startSvr(t, site.configFile)
    const bad = await rawRequest(svr.port, 'GET /x\x01y HTTP/1.1\r\nHost: a\r\n\r\n')
    assert.equal(bad.status, 400)
    const long = await rawRequest(svr.port, 'GET /' + 'a'.repeat(20000) + ' HTTP/1.1\r\nHost: a\r\n\r\n')
    assert.equal(long.status, 414)
    const entries = []
    await svr.waitFor(/"status":414/)
    for (const line of svr.output.split('\n')) {
      if (line.startsWith('{')) entries.push(JSON.parse(line))
    }
    const refused = entries.filter((entry) => entry.status === 400 || entry.status === 414)
    assert.equal(refused.length, 2, svr.output)
    assert.equal(refused[0].address, '127.0.0.1')
    assert.equal(refused[0].bytes, Buffer.byteLength(bad.body, 'latin1'))
    // A long line is cut in the log, so a scanner cannot fill it.
    assert.ok(refused[1].target.length < 2100, 'logged target of ' + refused[1].target.length + ' chars')
  })
})

describe('request ids', () => {
  it('should send a fresh id with every response, ignore an untrusted client\'s, and show it on 5xx pages', async (t) => {
    const site = await makeSite(t, { workers: 1, enableLogging: false }, { 'index.html': 'ok' })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), "if (href === '/boom') throw new Error('boom')\nelseCallback()\n")
    const svr = await startSvr(t, site.configFile)
    const first = await request(svr.port, '/', { headers: { 'X-Request-Id': 'client-chosen' } })
    const second = await request(svr.port, '/missing')
    assert.match(first.headers['x-request-id'], UUID)
    assert.match(second.headers['x-request-id'], UUID)
    assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id'])
    const failed = await request(svr.port, '/boom')
    assert.equal(failed.status, 500)
    assert.match(failed.headers['x-request-id'], UUID)
    assert.ok(failed.body.includes('Request ID: <code>' + failed.headers['x-request-id'] + '</code>'), failed.body)
    // The error line names the request, so the user's id leads to the stack.
    await svr.waitFor(new RegExp('error \\[worker 1\\] request ' + failed.headers['x-request-id'] + ': .*Error: boom'))
    assert.ok(!second.body.includes('Request ID'), 'only 5xx pages show the id')
  })
})

describe('log files', () => {
  it('should reopen access.log and error.log on SIGUSR1 without losing a line', async (t) => {
    const site = await makeSite(t, { workers: 2, logDirectory: 'logs', logFormat: 'json' })
    const svr = await startSvr(t, site.configFile)
    const logs = path.join(site.dir, 'logs')
    const before = []
    for (let i = 0; i < 20; i++) before.push((await request(svr.port, '/?before=' + i)).headers['x-request-id'])
    await waitForLines(path.join(logs, 'access.log'), 20)
    await fs.rename(path.join(logs, 'access.log'), path.join(logs, 'access.log.1'))
    await fs.rename(path.join(logs, 'error.log'), path.join(logs, 'error.log.1'))
    // Requests racing the rotation: their lines may land in either file.
    const during = Promise.all(Array.from({ length: 20 }, (_, i) => request(svr.port, '/?during=' + i)))
    svr.signal('SIGUSR1')
    const duringIds = (await during).map((res) => res.headers['x-request-id'])
    await waitForFile(path.join(logs, 'error.log'))
    await svr.waitFor(/info \[primary\] SIGUSR1: log files reopened/)
    await waitUntil(async () => /SIGUSR1: log files reopened/.test(await fs.readFile(path.join(logs, 'error.log'), 'utf8')),
      'the primary does not write to the new error.log')
    await waitForFile(path.join(logs, 'access.log'))
    // Both workers have switched once no process holds the rotated file open.
    const pids = [svr.child.pid, ...svr.workerPids().values()]
    await waitUntil(async () => !(await holdsOpen(pids, path.join(logs, 'access.log.1'))), 'the old access.log is still open')
    const after = []
    for (let i = 0; i < 20; i++) after.push((await request(svr.port, '/?after=' + i)).headers['x-request-id'])
    const newLines = await waitForLines(path.join(logs, 'access.log'), 20)
    const oldLines = await fs.readFile(path.join(logs, 'access.log.1'), 'utf8')
    const idsIn = (text) => text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).requestId)
    const oldIds = idsIn(oldLines)
    const newIds = await waitUntil(async () => {
      const ids = idsIn((await fs.readFile(path.join(logs, 'access.log'), 'utf8')))
      return ids.length >= 20 + duringIds.filter((id) => !oldIds.includes(id)).length ? ids : null
    }, 'lines missing after the reopen')
    assert.ok(newLines.length >= 20)
    for (const id of before) assert.ok(oldIds.includes(id), 'a line written before the rotation stays in the old file')
    for (const id of after) assert.ok(newIds.includes(id), 'a line written after the reopen goes to the new file')
    for (const id of duringIds) assert.equal(Number(oldIds.includes(id)) + Number(newIds.includes(id)), 1, 'exactly one line for ' + id)
    assert.equal(oldIds.length + newIds.length, 60)
  })

  it('should work the same in --single-threaded mode', async (t) => {
    const site = await makeSite(t, { logDirectory: 'logs', metricsPath: '/metrics' })
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    const logs = path.join(site.dir, 'logs')
    const first = await request(svr.port, '/')
    await waitForLines(path.join(logs, 'access.log'), 1)
    await fs.rename(path.join(logs, 'access.log'), path.join(logs, 'access.log.1'))
    svr.signal('SIGUSR1')
    await waitUntil(async () => !(await holdsOpen([svr.child.pid], path.join(logs, 'access.log.1'))), 'access.log.1 is still open')
    const second = await request(svr.port, '/missing')
    const [line] = await waitForLines(path.join(logs, 'access.log'), 1)
    assert.equal(parseCombined(line).requestId, second.headers['x-request-id'])
    const [old] = await waitForLines(path.join(logs, 'access.log.1'), 1)
    assert.equal(parseCombined(old).requestId, first.headers['x-request-id'])
    const metrics = await request(svr.port, '/metrics')
    assert.match(metrics.body, /^svr_http_requests_total\{class="4xx",worker="single"\} 1$/m)
    assert.match(metrics.body, /^svr_http_requests_total\{class="2xx",worker="single"\} 1$/m)
  })

  it('should refuse to start when the log directory cannot be written', async (t) => {
    const site = await makeSite(t, { workers: 1, logDirectory: 'config.json/logs' })
    const result = await runSvr(['--config', site.configFile])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /logDirectory: cannot write .*config\.json\/logs.*: a component of the path is not a directory/)
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'a message, not a stack trace')
  })
})

async function waitForFile (file) {
  await waitUntil(() => fs.access(file).then(() => true, () => false), file + ' was not created')
}
