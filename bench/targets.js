'use strict'

// Start and stop the servers under test. Every process started here is
// stopped by its pid, also when the run fails.

const { execFile, spawn } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const http = require('node:http')
const https = require('node:https')
const path = require('node:path')
// The test suite's helpers: the same port and PATH probes.
const { freePort, hasCommand } = require('../test/helpers/tools')

const SVR = path.join(__dirname, '..', 'svr.js')
const BARE = path.join(__dirname, 'bare-cluster.js')
const BARE_H2 = path.join(__dirname, 'bare-h2.js')
const BARE_PROXY = path.join(__dirname, 'bare-proxy.js')
const BARE_REPLAY = path.join(__dirname, 'bare-replay.js')
const UPSTREAM = path.join(__dirname, 'proxy-upstream.js')
const LISTENING = /listening on https?:\/\/127\.0\.0\.1:(\d+)/
const START_TIMEOUT_MS = 15000

const running = new Set()
let logCount = 0

/**
 * svr with the site's config, its output in a file (as journald would take
 * it, without the benchmark process reading every line).
 * @param {{configFile: string}} site
 * @param {string} dir
 * @param {{nodeArgs?: string[], configFile?: string, name?: string, scheme?: string, ready?: string, svr?: string}} [opts]
 *   nodeArgs: options for node, which cluster workers inherit; configFile: instead of the site's;
 *   name: of the target, 'svr' unless told; scheme: 'https' for a secure config; ready: the path
 *   that answers 200 once it serves, /hello (the site's script) unless told; svr: the svr.js of
 *   another checkout
 */
async function startSvr (site, dir, opts = {}) {
  const name = opts.name || 'svr'
  const logFile = logFileFor(dir, name)
  const out = fs.openSync(logFile, 'w')
  const begun = process.hrtime.bigint()
  const child = spawn(process.execPath, [...(opts.nodeArgs || []), opts.svr || SVR, '--config', opts.configFile || site.configFile], {
    stdio: ['ignore', out, out]
  })
  fs.closeSync(out)
  const proc = track(child, name)
  const match = await waitForLine(logFile, LISTENING, proc)
  const port = Number(match[1])
  await waitFor200(port, opts.ready || '/hello', proc, opts.scheme)
  const startMs = Number(process.hrtime.bigint() - begun) / 1e6
  const log = await fsp.readFile(logFile, 'utf8')
  const workerPids = [...log.matchAll(/worker \d+ up \(pid (\d+)\)/g)].map((m) => Number(m[1]))
  return { name, port, proc, pid: child.pid, startMs, workerPids, logFile }
}

/**
 * The bare Node cluster of bench/bare-cluster.js.
 * @param {string} dir
 * @param {{nodeArgs?: string[], svrHeaders?: boolean}} [opts] nodeArgs: options for node, which
 *   cluster workers inherit; svrHeaders: answer with svr's default headers ('bare-headers')
 */
async function startBare (dir, opts = {}) {
  const port = await freePort()
  const name = opts.svrHeaders ? 'bare-headers' : 'bare'
  const logFile = logFileFor(dir, name)
  const out = fs.openSync(logFile, 'w')
  const env = { ...process.env, BENCH_SVR_HEADERS: opts.svrHeaders ? '1' : '' }
  const child = spawn(process.execPath, [...(opts.nodeArgs || []), BARE, String(port)], { stdio: ['ignore', out, out], env })
  fs.closeSync(out)
  const proc = track(child, opts.svrHeaders ? 'bare cluster with svr headers' : 'bare cluster')
  await waitForLine(logFile, LISTENING, proc)
  await waitFor200(port, '/hello', proc)
  return { name, port, proc, pid: child.pid }
}

/**
 * The bare Node proxy of bench/bare-proxy.js, in front of the upstream.
 * @param {string} dir
 * @param {number} upstreamPort
 * @param {{client?: 'undici'|'http', nodeArgs?: string[]}} [opts] client: the upstream side
 *   ('bare-proxy': an undici Pool; 'bare-proxy-http': node:http with a keep-alive Agent)
 */
async function startBareProxy (dir, upstreamPort, opts = {}) {
  const port = await freePort()
  const client = opts.client || 'undici'
  const name = client === 'http' ? 'bare-proxy-http' : 'bare-proxy'
  const logFile = logFileFor(dir, name)
  const out = fs.openSync(logFile, 'w')
  const child = spawn(process.execPath, [...(opts.nodeArgs || []), BARE_PROXY, String(port), String(upstreamPort), client], {
    stdio: ['ignore', out, out]
  })
  fs.closeSync(out)
  const proc = track(child, 'bare proxy (' + client + ')')
  await waitForLine(logFile, LISTENING, proc)
  await waitFor200(port, '/proxy/', proc)
  return { name, port, proc, pid: child.pid }
}

/**
 * The upstream of the proxy rows (bench/proxy-upstream.js).
 * @param {string} dir
 */
async function startUpstream (dir) {
  const port = await freePort()
  const logFile = logFileFor(dir, 'upstream')
  const out = fs.openSync(logFile, 'w')
  const child = spawn(process.execPath, [UPSTREAM, String(port)], { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proc = track(child, 'upstream')
  await waitForLine(logFile, LISTENING, proc)
  return { name: 'upstream', port, proc, pid: child.pid }
}

/**
 * A redis-server on a loopback port, the store of the rows with `store`:
 * nothing kept on disk (no RDB, no AOF, its directory the bench's), so
 * that its writes are the ones svr sends. Stopped by its pid with the rest.
 * @param {string} dir
 */
async function startRedis (dir) {
  const port = await freePort()
  const logFile = logFileFor(dir, 'redis')
  const out = fs.openSync(logFile, 'w')
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--dir', dir]
  const child = spawn('redis-server', args, { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proc = track(child, 'redis-server')
  await waitForLine(logFile, /Ready to accept connections/, proc)
  return { name: 'redis-server', port, url: 'redis://127.0.0.1:' + port, proc, pid: child.pid, logFile }
}

// Several servers start within the same millisecond; each has a log of its own.
function logFileFor (dir, name) {
  return path.join(dir, `${name}-${++logCount}.log`)
}

/**
 * Debian's nginx on a loopback port with a config of its own, as the
 * reference for static files, listings, compression and proxying: 2
 * workers, sendfile, autoindex, gzip, and /proxy/ passed to the upstream
 * with keep-alive connections to it. null when nginx is not installed or does not
 * start (a CI runner without root, say): the rows it is the baseline of
 * then have none. With `tls`, it listens with TLS and HTTP/2, with a
 * shared session cache and session tickets (as a production site would).
 * @param {string} dir
 * @param {string} webroot
 * @param {{tls?: {cert: string, key: string}|null, upstreamPort?: number|null}} [opts]
 *   tls: PEM files; upstreamPort: the upstream of /proxy/, none when null
 */
async function startNginx (dir, webroot, { tls = null, upstreamPort = null } = {}) {
  if (!await hasCommand('nginx')) return null
  try {
    return await launchNginx(dir, webroot, tls, upstreamPort)
  } catch (err) {
    await stopAll({ name: tls === null ? 'nginx' : 'nginx tls' })
    console.error('bench: nginx did not start, its rows have no baseline: ' + err.message.split('\n')[0])
    return null
  }
}

async function launchNginx (dir, webroot, tls, upstreamPort) {
  const port = await freePort()
  const prefix = path.join(dir, tls === null ? 'nginx' : 'nginx-tls')
  const listen = tls === null
    ? `listen 127.0.0.1:${port};`
    : `listen 127.0.0.1:${port} ssl http2;
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};
    ssl_session_cache shared:SSL:10m;
    ssl_session_tickets on;`
  await fsp.mkdir(prefix, { recursive: true })
  const config = `daemon off;
master_process on;
worker_processes 2;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log ${prefix}/access.log;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `${k}_temp_path ${prefix}/${k};`).join('\n  ')}
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  gzip on;
  gzip_types text/plain text/css application/javascript;
  ${upstreamPort === null ? '' : `upstream app {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }`}
  server {
    ${listen}
    root ${webroot};
    location /list/ { autoindex on; }
    ${upstreamPort === null ? '' : `location /proxy/ {
      proxy_pass http://app/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }`}
  }
}
`
  const file = path.join(prefix, 'nginx.conf')
  await fsp.writeFile(file, config)
  const child = spawn('nginx', ['-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', file], { stdio: 'ignore' })
  const name = tls === null ? 'nginx' : 'nginx tls'
  const proc = track(child, name, 'SIGQUIT')
  await waitFor200(port, '/1k.html', proc, tls === null ? 'http' : 'https')
  return { name, port, proc, pid: child.pid }
}

/**
 * Debian's caddy (2.6) on a loopback port with a generated Caddyfile, the
 * second reference for proxying (issue #28) and for static files: the
 * admin endpoint and automatic HTTPS off, the webroot through
 * `file_server`, /proxy/ through `reverse_proxy` to the upstream with the
 * prefix cut off (as nginx's `proxy_pass http://app/`) and up to 64 idle
 * keep-alive connections to it (nginx's `keepalive 64`; Caddy's default is
 * 32), every request in an access log file as nginx writes one (Caddy's
 * JSON lines, the file never rolled). GOMAXPROCS is left unset, so Go
 * runs on every core, as nginx runs 2 workers on the 2 cores of the bench
 * machine. Its storage and autosaved config stay in the bench's directory.
 * null when caddy is not installed (saying which package brings it) or
 * does not start: the rows it is the baseline of then have none.
 * @param {string} dir
 * @param {string} webroot
 * @param {{upstreamPort?: number|null}} [opts] upstreamPort: the upstream of /proxy/, none when null
 */
async function startCaddy (dir, webroot, { upstreamPort = null } = {}) {
  if (!await hasCommand('caddy')) {
    console.error('bench: caddy is not installed (apt-get install caddy), its rows have no baseline')
    return null
  }
  try {
    return await launchCaddy(dir, webroot, upstreamPort)
  } catch (err) {
    await stopAll({ name: 'caddy' })
    console.error('bench: caddy did not start, its rows have no baseline: ' + err.message.split('\n')[0])
    return null
  }
}

/**
 * The Caddyfile of startCaddy.
 * @param {{port: number, webroot: string, upstreamPort: number|null, accessLog: string}} opts
 * @returns {string}
 */
function caddyfile ({ port, webroot, upstreamPort, accessLog }) {
  const proxy = upstreamPort === null
    ? ''
    : `
\thandle_path /proxy/* {
\t\treverse_proxy 127.0.0.1:${upstreamPort} {
\t\t\ttransport http {
\t\t\t\tkeepalive_idle_conns_per_host 64
\t\t\t}
\t\t}
\t}`
  return `{
\tadmin off
\tauto_https off
\tgrace_period 1s
}
http://:${port} {
\tbind 127.0.0.1
\tlog {
\t\toutput file ${accessLog} {
\t\t\troll_disabled
\t\t}
\t}${proxy}
\thandle {
\t\troot * ${webroot}
\t\tfile_server
\t}
}
`
}

async function launchCaddy (dir, webroot, upstreamPort) {
  const port = await freePort()
  const prefix = path.join(dir, 'caddy')
  await fsp.mkdir(prefix, { recursive: true })
  const file = path.join(prefix, 'Caddyfile')
  await fsp.writeFile(file, caddyfile({ port, webroot, upstreamPort, accessLog: path.join(prefix, 'access.log') }))
  const env = { ...process.env, XDG_DATA_HOME: path.join(prefix, 'data'), XDG_CONFIG_HOME: path.join(prefix, 'config') }
  delete env.GOMAXPROCS
  const logFile = logFileFor(dir, 'caddy')
  const out = fs.openSync(logFile, 'w')
  const child = spawn('caddy', ['run', '--config', file, '--adapter', 'caddyfile'], { stdio: ['ignore', out, out], env })
  fs.closeSync(out)
  const proc = track(child, 'caddy')
  try {
    await waitFor200(port, '/1k.html', proc)
    if (upstreamPort !== null) await waitFor200(port, '/proxy/', proc)
  } catch (err) {
    // Caddy says why on its last line (JSON, or "Error: …" as it exits).
    const last = (await fsp.readFile(logFile, 'utf8')).trim().split('\n').pop()
    throw new Error(err.message + (last ? ' (' + last + ')' : ''))
  }
  return { name: 'caddy', port, proc, pid: child.pid, logFile, version: await caddyVersion() }
}

// "2.6.2" from `caddy version` ("2.6.2" in Debian's build, "v2.x.y h1:…" in upstream's).
function caddyVersion () {
  return new Promise((resolve) => {
    execFile('caddy', ['version'], (err, stdout) => resolve(err ? 'unknown' : stdout.trim().split(/\s+/)[0].replace(/^v/, '')))
  })
}

function track (child, name, stopSignal = 'SIGTERM') {
  const proc = { child, name, stopSignal, exited: null }
  proc.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    running.delete(proc)
    resolve({ code, signal })
  }))
  running.add(proc)
  return proc
}

/**
 * @param {{child: import('node:child_process').ChildProcess, stopSignal: string, exited: Promise}} proc
 */
async function stop (proc) {
  if (!running.has(proc)) return
  proc.child.kill(proc.stopSignal)
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15000)
  await proc.exited
  clearTimeout(timer)
}

/**
 * Stop whatever is still running: on error, or on Ctrl-C.
 * @param {{name?: string}} [only] just the processes of this name
 */
async function stopAll (only = {}) {
  await Promise.all([...running].filter((proc) => !only.name || proc.name === only.name).map(stop))
}

async function waitForLine (file, pattern, proc) {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    const text = await fsp.readFile(file, 'utf8')
    const match = text.match(pattern)
    if (match) return match
    if (!running.has(proc)) throw new Error(proc.name + ' exited before listening:\n' + text)
    await sleep(10)
  }
  throw new Error(proc.name + ' did not start within ' + START_TIMEOUT_MS + ' ms')
}

async function waitFor200 (port, target, proc, scheme = 'http') {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (await status(port, target, scheme).catch(() => 0) === 200) return
    if (!running.has(proc)) throw new Error(proc.name + ' exited before answering 200 on ' + target)
    await sleep(5)
  }
  throw new Error('no 200 from 127.0.0.1:' + port + target)
}

function status (port, target, scheme = 'http') {
  const client = scheme === 'https' ? https : http
  return new Promise((resolve, reject) => {
    const req = client.get({ host: '127.0.0.1', port, path: target, agent: false, rejectUnauthorized: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
  })
}

/** VmRSS of a process in MB, from /proc. */
async function rssMb (pid) {
  const text = await fsp.readFile(`/proc/${pid}/status`, 'utf8')
  return Number(text.match(/^VmRSS:\s+(\d+) kB/m)[1]) / 1024
}

let clockTicks = null

// USER_HZ, the unit of /proc's CPU times (100 on Linux, asked once).
function ticksPerSecond () {
  if (clockTicks === null) {
    clockTicks = new Promise((resolve) => {
      execFile('getconf', ['CLK_TCK'], (err, stdout) => resolve(err || !(Number(stdout) > 0) ? 100 : Number(stdout)))
    })
  }
  return clockTicks
}

/**
 * CPU time (user + system, every thread) of a process and of every
 * process below it, in seconds, from /proc: a server's primary or master
 * with its workers. Read before and after a load run, it gives the CPU a
 * target spent on that run's requests, which a machine shared with other
 * work disturbs less than its rate.
 * @param {number} pid
 * @returns {Promise<number>}
 */
async function treeCpuSeconds (pid) {
  const procs = new Map()
  const names = (await fsp.readdir('/proc')).filter((name) => /^\d+$/.test(name))
  await Promise.all(names.map(async (name) => {
    let text
    try {
      text = await fsp.readFile(`/proc/${name}/stat`, 'utf8')
    } catch {
      return // gone since the listing
    }
    // After "pid (comm) ": state, ppid, …, utime and stime (fields 14 and 15).
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    procs.set(Number(name), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
  }))
  let ticks = 0
  const queue = [pid]
  while (queue.length > 0) {
    const current = queue.pop()
    if (procs.has(current)) ticks += procs.get(current).ticks
    for (const [child, { ppid }] of procs) if (ppid === current) queue.push(child)
  }
  return ticks / await ticksPerSecond()
}

/**
 * One run with the CPU time (user + system) the target's process tree
 * spent in it per request completed: `cpuUs`, in µs (null without a
 * request). Not the load generator's.
 * @param {{pid: number}} target
 * @param {() => Promise<{requests: number}>} load
 */
async function measuredRun (target, load) {
  const before = await treeCpuSeconds(target.pid)
  const result = await load()
  const cpu = await treeCpuSeconds(target.pid) - before
  return { ...result, cpuUs: result.requests > 0 ? cpu * 1e6 / result.requests : null }
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * bench/bare-h2.js: a bare Node HTTP/2 server on the stream API answering
 * every path with `file` from memory.
 * @param {string} dir
 * @param {string} file
 * @param {{cert: string, key: string}} tls PEM files
 * @param {boolean} [svrHeaders] send svr's default headers too
 */
async function startBareH2 (dir, file, tls, svrHeaders = false) {
  const port = await freePort()
  const name = svrHeaders ? 'bare h2 + svr headers' : 'bare h2'
  const logFile = logFileFor(dir, svrHeaders ? 'bare-h2-headers' : 'bare-h2')
  const out = fs.openSync(logFile, 'w')
  const args = [BARE_H2, String(port), file, tls.cert, tls.key]
  if (svrHeaders) args.push('svr-headers')
  const child = spawn(process.execPath, args, { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proc = track(child, name)
  // Its workers say so once they listen; it speaks HTTP/2 only.
  await waitForLine(logFile, LISTENING, proc)
  return { name, port, proc, pid: child.pid }
}

/**
 * bench/bare-replay.js: a bare Node cluster answering with the answers
 * recorded from svr (bench/own.js), over HTTP, or with PEM files over TLS,
 * HTTP/2 and HTTP/1.1 on the same port.
 * @param {string} dir
 * @param {string} answersFile
 * @param {{cert: string, key: string}|null} [tls]
 */
async function startBareReplay (dir, answersFile, tls = null) {
  const port = await freePort()
  const name = tls === null ? 'replay' : 'replay tls'
  const logFile = logFileFor(dir, tls === null ? 'replay' : 'replay-tls')
  const out = fs.openSync(logFile, 'w')
  const args = [BARE_REPLAY, String(port), answersFile, ...(tls === null ? [] : [tls.cert, tls.key])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proc = track(child, name)
  // Its primary says so once every worker listens.
  await waitForLine(logFile, LISTENING, proc)
  return { name, port, proc, pid: child.pid }
}

module.exports = { track, startSvr, startBare, startBareProxy, startBareH2, startBareReplay, startUpstream, startRedis, startNginx, startCaddy, caddyfile, stop, stopAll, rssMb, treeCpuSeconds, measuredRun, hasCommand, sleep }
