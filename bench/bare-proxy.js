'use strict'

// node bench/bare-proxy.js PORT UPSTREAM_PORT [undici|http]
//
// The ceiling of the proxy row: the least a Node cluster can do to proxy —
// two workers, /proxy/… forwarded to the upstream with the prefix cut off,
// keep-alive connections to it (an undici Pool, or node:http with a
// keep-alive Agent), the answer streamed back with backpressure. No
// forwarding headers, no hop-by-hop filtering, no log: what svr's `proxy`
// adds on top of this is svr's own cost, what this lacks against nginx is
// Node's.

const cluster = require('node:cluster')
const http = require('node:http')
const { forkBareWorkers } = require('./bare-primary')

const WORKERS = 2
const PREFIX = '/proxy'
// svr's default `connections` per worker and upstream.
const CONNECTIONS = 128

function undiciForwarder (origin) {
  const { Pool } = require('undici')
  const pool = new Pool(origin, { connections: CONNECTIONS, keepAliveTimeout: 4000 })
  return function forward (req, res) {
    pool.request({ path: req.url.slice(PREFIX.length), method: req.method, headers: req.headers, body: null })
      .then((answer) => {
        res.writeHead(answer.statusCode, answer.headers)
        relay(answer.body, res)
      }, () => fail(res))
  }
}

function httpForwarder (origin) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  return function forward (req, res) {
    const out = http.request(origin + req.url.slice(PREFIX.length), { method: req.method, agent, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers)
      relay(answer, res)
    })
    out.on('error', () => fail(res))
    out.end()
  }
}

// pipe() with the one listener it needs to end a body the client left.
function relay (body, res) {
  res.once('close', () => { if (!res.writableFinished) body.destroy() })
  body.on('error', () => res.destroy())
  body.pipe(res)
}

function fail (res) {
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.statusCode = 502
  res.end()
}

if (cluster.isPrimary) {
  const [port, upstreamPort, kind = 'undici'] = process.argv.slice(2)
  forkBareWorkers(WORKERS, { BENCH_PORT: port, BENCH_UPSTREAM: upstreamPort, BENCH_CLIENT: kind }, 'http://127.0.0.1:' + port)
} else {
  process.on('SIGTERM', () => process.exit(0))
  const origin = 'http://127.0.0.1:' + process.env.BENCH_UPSTREAM
  const forward = process.env.BENCH_CLIENT === 'http' ? httpForwarder(origin) : undiciForwarder(origin)
  http.createServer(forward).listen(Number(process.env.BENCH_PORT), '127.0.0.1')
}
