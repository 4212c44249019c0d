'use strict'

// The baseline: the least a Node cluster can do for the same work — two
// workers, http.createServer, /hello, /fibonacci?n= and 404 for the rest.
// What svr adds on top of this is what the benchmark measures.
//
// With BENCH_SVR_HEADERS=1 every answer also carries svr's default headers
// (Server and a fresh X-Request-Id, set before the handler runs as svr sets
// them; Date Node adds anyway), and is written as a 3.x script writes it
// (writeHead, then end, so chunked): what production headers cost, apart
// from what svr's own code costs.

const cluster = require('node:cluster')
const { randomUUID } = require('node:crypto')
const http = require('node:http')
const { forkBareWorkers } = require('./bare-primary')

const WORKERS = 2
const MAX_N = 100000

function fibonacci (n) {
  let a = 0n
  let b = 1n
  for (let i = 0; i < n; i++) {
    const next = a + b
    a = b
    b = next
  }
  return a
}

// Before the handler, as svr's access log sets its id and the pipeline Server.
function withSvrHeaders (req, res) {
  res.setHeader('X-Request-Id', randomUUID())
  res.setHeader('Server', 'svr')
  handle(req, res)
}

function handle (req, res) {
  const query = req.url.indexOf('?')
  const pathname = query === -1 ? req.url : req.url.slice(0, query)
  if (pathname === '/hello') {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end('Hello World')
  } else if (pathname === '/fibonacci') {
    const n = Number(new URLSearchParams(req.url.slice(query + 1)).get('n'))
    if (!Number.isInteger(n) || n < 0) {
      res.writeHead(400, { 'Content-Type': 'text/plain' })
      res.end('n must be a non-negative integer')
      return
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end(fibonacci(Math.min(n, MAX_N)).toString())
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain' })
    res.end('Not Found')
  }
}

function listen (port) {
  return http.createServer(process.env.BENCH_SVR_HEADERS === '1' ? withSvrHeaders : handle).listen(port, '127.0.0.1')
}

if (process.env.BENCH_SINGLE === '1') {
  // One process, no cluster: what bench/bounds.md counts instructions of
  // against svr --single-threaded.
  const port = Number(process.argv[2])
  listen(port).on('listening', () => console.log('listening on http://127.0.0.1:' + port))
  process.on('SIGTERM', () => process.exit(0))
} else if (cluster.isPrimary) {
  const port = Number(process.argv[2])
  forkBareWorkers(WORKERS, { BENCH_PORT: String(port), BENCH_SVR_HEADERS: process.env.BENCH_SVR_HEADERS || '' }, 'http://127.0.0.1:' + port)
} else {
  process.on('SIGTERM', () => process.exit(0))
  listen(Number(process.env.BENCH_PORT))
}
