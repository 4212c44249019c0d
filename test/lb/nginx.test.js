'use strict'

// Two svr instances behind Debian's nginx, configured from the recipe in
// docs/examples/nginx-svr.conf but with nginx's retries off, so that a
// request svr fails reaches the client instead of being retried on the
// other instance: a client looping through nginx sees no failed request
// while both reload, one looping on svr itself none on an accepted
// connection while it stops, and svr sees the client's own address, not
// nginx's.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { makeSite, startSvr, removeDir } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { freePort, missingTools, requireTools } = require('../helpers/tools')

const RECIPE = path.join(__dirname, '..', '..', 'docs', 'examples', 'nginx-svr.conf')
// The client connects from another loopback address than nginx uses towards
// svr, so that the two can be told apart.
const CLIENT_ADDRESS = '127.0.0.2'

// Answers with the client address svr resolved, and the worker's pid.
const SCRIPT = `if (href === '/who') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(req.socket.realRemoteAddress + ' ' + process.pid)
  return
}
`

/** The recipe with its upstream servers and listen address replaced, and no retries. */
async function nginxConfig (dir, listenPort, upstreamPorts) {
  const recipe = await fs.readFile(RECIPE, 'utf8')
  const servers = upstreamPorts.map((port) => `    server 127.0.0.1:${port} max_fails=3 fail_timeout=10s;`).join('\n')
  const site = recipe
    .replace(/^ {4}server 10\.0\.0\.\d+:8080 .*\n/gm, '')
    .replace(/^(upstream svr \{\n(?:.*#.*\n)*)/m, `$1${servers}\n`)
    .replace(/^ {4}listen 80;\n {4}listen \[::\]:80;\n/m, `    listen 127.0.0.1:${listenPort};\n`)
    .replace(/^( {8}proxy_next_upstream) .*;\n {8}proxy_next_upstream_tries \d+;\n/m, '$1 off;\n')
  assert.match(site, new RegExp(`server 127\\.0\\.0\\.1:${upstreamPorts[1]} `))
  assert.match(site, new RegExp(`listen 127\\.0\\.0\\.1:${listenPort};`))
  assert.match(site, /^ {8}proxy_next_upstream off;$/m)
  assert.doesNotMatch(site, /proxy_next_upstream_tries/)
  return [
    'daemon off;',
    'master_process on;',
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 256; }',
    'http {',
    `  access_log ${dir}/access.log;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`),
    site,
    '}',
    ''
  ].join('\n')
}

async function startNginx (scope, dir, config) {
  const file = path.join(dir, 'nginx.conf')
  await fs.writeFile(file, config)
  const child = spawn('nginx', ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  scope.after(async () => {
    // SIGQUIT: nginx's graceful stop; its workers go with the master.
    child.kill('SIGQUIT')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  })
  return { child, output: () => output }
}

function get (port, target, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, localAddress: CLIENT_ADDRESS, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }))
      res.on('error', reject)
    })
    req.setTimeout(10000, () => req.destroy(new Error('timed out')))
    req.on('error', (err) => {
      err.reusedSocket = req.reusedSocket
      reject(err)
    })
    req.end()
  })
}

async function waitUntil (check, timeout = 10000) {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

/** Loop requests through nginx until stop(); count every failure. */
function loop (port, agent) {
  const stats = { ok: 0, failures: [], addresses: new Set(), pids: new Set() }
  let running = true
  const done = (async () => {
    while (running) {
      try {
        const res = await get(port, '/who', agent)
        if (res.status !== 200) {
          stats.failures.push('status ' + res.status)
          continue
        }
        stats.ok++
        const [address, pid] = res.body.split(' ')
        stats.addresses.add(address)
        stats.pids.add(pid)
      } catch (err) {
        stats.failures.push((err.reusedSocket ? 'kept-alive connection: ' : 'new connection: ') + (err.code || err.message))
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
  })()
  return { stats, stop: async () => { running = false; await done } }
}

describe('behind nginx as load balancer', () => {
  const scope = createScope()
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  let svrs = []
  let nginxPort

  before(async () => {
    // Without nginx each test skips, or under CI fails, by requireTools.
    if (missingTools('nginx') !== null) return
    const config = { workers: 2, enableIPSpoofing: true, trustedProxies: ['127.0.0.1'], healthPath: '/healthz' }
    for (let i = 0; i < 2; i++) {
      const site = await makeSite(scope, config)
      await fs.writeFile(path.join(path.dirname(site.configFile), 'serverSideScript.js'), SCRIPT)
      svrs.push({ site, svr: await startSvr(scope, site.configFile) })
    }
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-nginx-'))
    scope.after(() => removeDir(dir))
    nginxPort = await freePort()
    await startNginx(scope, dir, await nginxConfig(dir, nginxPort, svrs.map(({ svr }) => svr.port)))
    const up = await waitUntil(async () => (await get(nginxPort, '/who', false)).status === 200)
    assert.ok(up, 'nginx answers')
  })

  after(async () => {
    agent.destroy()
    await scope.cleanup()
    svrs = []
  })

  it('svr sees the client address nginx forwards, not nginx', async (t) => {
    if (!requireTools(t, 'nginx')) return
    const res = await get(nginxPort, '/who', false)
    assert.equal(res.status, 200)
    assert.equal(res.body.split(' ')[0], CLIENT_ADDRESS)
    // nginx's $request_id (32 hex digits) is adopted from the trusted proxy,
    // sent back, and written to svr's access log with the client's address.
    const id = res.headers['x-request-id']
    assert.match(id || '', /^[0-9a-f]{32}$/)
    const logged = await Promise.any(svrs.map(({ svr }) => svr.waitFor(new RegExp('^(\\S+) .*"GET /who HTTP/1\\.[01]" 200 .*"' + id + '"$', 'm'), 5000)))
    assert.equal(logged[1], CLIENT_ADDRESS)
  })

  it('reloading both instances one after the other fails no request, with no retry by nginx', async (t) => {
    if (!requireTools(t, 'nginx')) return
    const client = loop(nginxPort, agent)
    for (const { svr } of svrs) {
      const from = svr.output.length
      svr.signal('SIGHUP')
      await svr.waitFor(/reload applied/, 20000, from)
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
    await client.stop()
    assert.deepEqual(client.stats.failures, [])
    assert.ok(client.stats.ok > 20, `only ${client.stats.ok} requests`)
  })

  it('stopping one instance with SIGTERM fails no request on a connection it had accepted', async (t) => {
    if (!requireTools(t, 'nginx')) return
    // Straight to svr: without retries nginx would pass on the refused
    // connections of a stopped instance, which only nginx can avoid. What
    // svr owes is an answer to every request on a connection it accepted
    // before the stop. New connections after that are refused, or (the
    // cluster primary still accepts while its last worker stops) reset
    // before any byte: either way nothing was processed, and a client or
    // proxy can retry them safely.
    const direct = new http.Agent({ keepAlive: true, maxSockets: 4 })
    t.after(() => direct.destroy())
    const { svr } = svrs[0]
    const client = loop(svr.port, direct)
    await new Promise((resolve) => setTimeout(resolve, 300))
    svr.signal('SIGTERM')
    const exit = await svr.exited
    await client.stop()
    assert.equal(exit.code, 0)
    const unanswered = new Set(['new connection: ECONNREFUSED', 'new connection: ECONNRESET'])
    assert.deepEqual(client.stats.failures.filter((failure) => !unanswered.has(failure)), [])
    assert.ok(client.stats.ok > 20, `only ${client.stats.ok} requests`)
  })
})
