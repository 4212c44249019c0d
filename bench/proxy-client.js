'use strict'

// node bench/proxy-client.js [seconds]
//
// The measurement behind the proxy's HTTP client (docs/proxy.md): the same
// minimal reverse proxy, once with an undici Pool and once with node:http
// and a keep-alive Agent, in front of the same bare Node upstream answering
// 1 KiB, loaded with autocannon at 50 connections, runs alternating
// (A B A B) so that drift of the machine cancels out. Each proxy and the
// upstream run in a process of their own on loopback.

const { spawn } = require('node:child_process')
const autocannon = require('autocannon')

const SECONDS = Number(process.argv[2] || 5)
const ROUNDS = 2

const UPSTREAM = `
const body = Buffer.alloc(1024, 'x')
require('node:http').createServer((req, res) => { res.setHeader('Content-Type', 'text/plain'); res.end(body) })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port) })`

const PROXY = `
const http = require('node:http')
const { pipeline } = require('node:stream')
const [kind, port] = process.argv.slice(1)
const origin = 'http://127.0.0.1:' + port
let forward
if (kind === 'undici') {
  const { Pool } = require(${JSON.stringify(require.resolve('undici'))})
  const pool = new Pool(origin, { connections: 128 })
  forward = (req, res) => pool.request({ path: req.url, method: req.method, headers: { host: '127.0.0.1' }, body: null })
    .then((up) => { res.writeHead(up.statusCode, up.headers); pipeline(up.body, res, () => {}) }, () => { res.statusCode = 502; res.end() })
} else {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 })
  forward = (req, res) => {
    const out = http.request(origin + req.url, { method: req.method, agent, headers: { host: '127.0.0.1' } }, (up) => {
      res.writeHead(up.statusCode, up.headers)
      pipeline(up, res, () => {})
    })
    out.on('error', () => { res.statusCode = 502; res.end() })
    out.end()
  }
}
http.createServer(forward).listen(0, '127.0.0.1', function () { console.log(this.address().port) })`

function start (code, args) {
  const child = spawn(process.execPath, ['-e', code, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (data) => resolve({ child, port: Number(String(data).trim()) }))
    child.once('error', reject)
  })
}

function load (port) {
  return new Promise((resolve, reject) => {
    autocannon({ url: 'http://127.0.0.1:' + port + '/', connections: 50, duration: SECONDS }, (err, result) => {
      if (err) reject(err)
      else resolve(result)
    })
  })
}

async function main () {
  const upstream = await start(UPSTREAM, [])
  const proxies = {
    undici: await start(PROXY, ['undici', String(upstream.port)]),
    'node:http': await start(PROXY, ['http', String(upstream.port)])
  }
  const totals = { undici: [], 'node:http': [] }
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(proxies)) {
        const result = await load(proxies[name].port)
        totals[name].push({ rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx })
      }
    }
  } finally {
    for (const { child } of [upstream, ...Object.values(proxies)]) child.kill()
  }
  console.log('| client | requests/s | p99 latency (ms) | errors |')
  console.log('|---|---|---|---|')
  for (const [name, runs] of Object.entries(totals)) {
    const mean = (key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length
    console.log('| ' + name + ' | ' + Math.round(mean('rps')) + ' | ' + mean('p99').toFixed(1) + ' | ' + runs.reduce((s, r) => s + r.errors, 0) + ' |')
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
