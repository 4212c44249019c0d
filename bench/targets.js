'use strict'

// Start and stop the servers under test. Every process started here is
// stopped by its pid, also when the run fails.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
// The test suite's helpers: the same port and PATH probes.
const { freePort, hasCommand } = require('../test/helpers/tools')

const SVR = path.join(__dirname, '..', 'svr.js')
const BARE = path.join(__dirname, 'bare-cluster.js')
const UPSTREAM = path.join(__dirname, 'proxy-upstream.js')
const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/
const START_TIMEOUT_MS = 15000

const running = new Set()
let logCount = 0

/**
 * svr with the site's config, its output in a file (as journald would take
 * it, without the benchmark process reading every line).
 * @param {{configFile: string}} site
 * @param {string} dir
 * @param {{nodeArgs?: string[], configFile?: string, name?: string}} [opts]
 *   nodeArgs: options for node, which cluster workers inherit; configFile: instead of the site's;
 *   name: of the target, 'svr' unless told
 */
async function startSvr (site, dir, opts = {}) {
  const name = opts.name || 'svr'
  const logFile = logFileFor(dir, name)
  const out = fs.openSync(logFile, 'w')
  const begun = process.hrtime.bigint()
  const child = spawn(process.execPath, [...(opts.nodeArgs || []), SVR, '--config', opts.configFile || site.configFile], {
    stdio: ['ignore', out, out]
  })
  fs.closeSync(out)
  const proc = track(child, name)
  const match = await waitForLine(logFile, LISTENING, proc)
  const port = Number(match[1])
  await waitFor200(port, '/hello', proc)
  const startMs = Number(process.hrtime.bigint() - begun) / 1e6
  const log = await fsp.readFile(logFile, 'utf8')
  const workerPids = [...log.matchAll(/worker \d+ up \(pid (\d+)\)/g)].map((m) => Number(m[1]))
  return { name, port, proc, pid: child.pid, startMs, workerPids, logFile }
}

/**
 * The bare Node cluster of bench/bare-cluster.js.
 * @param {string} dir
 * @param {{nodeArgs?: string[]}} [opts] options for node; cluster workers inherit them
 */
async function startBare (dir, opts = {}) {
  const port = await freePort()
  const logFile = logFileFor(dir, 'bare')
  const out = fs.openSync(logFile, 'w')
  const child = spawn(process.execPath, [...(opts.nodeArgs || []), BARE, String(port)], { stdio: ['ignore', out, out] })
  fs.closeSync(out)
  const proc = track(child, 'bare cluster')
  await waitForLine(logFile, LISTENING, proc)
  await waitFor200(port, '/hello', proc)
  return { name: 'bare', port, proc, pid: child.pid }
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
 * then have none.
 */
async function startNginx (dir, webroot, upstreamPort) {
  if (!await hasCommand('nginx')) return null
  try {
    return await launchNginx(dir, webroot, upstreamPort)
  } catch (err) {
    await stopAll({ name: 'nginx' })
    console.error('bench: nginx did not start, its rows have no baseline: ' + err.message.split('\n')[0])
    return null
  }
}

async function launchNginx (dir, webroot, upstreamPort) {
  const port = await freePort()
  const prefix = path.join(dir, 'nginx')
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
  upstream app {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    root ${webroot};
    location /list/ { autoindex on; }
    location /proxy/ {
      proxy_pass http://app/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`
  const file = path.join(prefix, 'nginx.conf')
  await fsp.writeFile(file, config)
  const child = spawn('nginx', ['-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', file], { stdio: 'ignore' })
  const proc = track(child, 'nginx', 'SIGQUIT')
  await waitFor200(port, '/1k.html', proc)
  return { name: 'nginx', port, proc, pid: child.pid }
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

async function waitFor200 (port, target, proc) {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (await status(port, target).catch(() => 0) === 200) return
    if (!running.has(proc)) throw new Error(proc.name + ' exited before answering 200 on ' + target)
    await sleep(5)
  }
  throw new Error('no 200 from 127.0.0.1:' + port + target)
}

function status (port, target) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
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

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

module.exports = { startSvr, startBare, startUpstream, startNginx, stop, stopAll, rssMb, hasCommand, sleep }
