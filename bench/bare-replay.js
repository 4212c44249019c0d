'use strict'

// The baseline of `npm run bench -- --own`: the least Node does for the same
// bytes on the wire as svr. Two cluster workers answer every request for a
// recorded path with svr's recorded answer (bench/replay-answers.js): its
// status, its headers with a fresh X-Request-Id in place of svr's, its body,
// from memory. Over HTTP/1.1 by res.writeHead then res.end, so that an
// answer svr sent chunked goes out chunked again and one with
// Content-Length keeps it; over HTTP/2 by stream.respond then stream.end.
// Any other path: 404 text. What svr costs above this is svr's own work.
// node bench/bare-replay.js PORT ANSWERS_JSON [CERT KEY]
// (BENCH_SINGLE=1: one process instead of two cluster workers.)
// Without CERT and KEY: http.createServer. With them:
// http2.createSecureServer with allowHTTP1, HTTP/1.1 requests (wrk, which
// offers no ALPN) on the `request` event, HTTP/2 streams on `stream`.

const cluster = require('node:cluster')
const { randomUUID } = require('node:crypto')
const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const { h1Answer, h2Answer, pathOf } = require('./replay-answers')
const { forkBareWorkers } = require('./bare-primary')

const WORKERS = 2

/**
 * The answers of a file, built once, by path and protocol.
 * @param {string} file
 * @returns {{h1: Map<string, object>, h2: Map<string, object>}}
 */
function loadAnswers (file) {
  const answers = { h1: new Map(), h2: new Map() }
  for (const [target, recorded] of Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')))) {
    if (recorded.h1) answers.h1.set(target, h1Answer(recorded.h1))
    if (recorded.h2) answers.h2.set(target, h2Answer(recorded.h2))
  }
  return answers
}

function replayH1 (answers) {
  return (req, res) => {
    const answer = answers.get(pathOf(req.url))
    if (answer === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' })
      res.end('Not Found')
      return
    }
    let headers = answer.headers
    if (answer.idAt !== -1) {
      headers = headers.slice()
      headers[answer.idAt] = randomUUID()
    }
    res.writeHead(answer.status, headers)
    res.end(answer.body)
  }
}

function replayH2 (answers) {
  return (stream, requestHeaders) => {
    const answer = answers.get(pathOf(requestHeaders[':path']))
    if (answer === undefined) {
      stream.respond({ ':status': 404, 'content-type': 'text/plain' })
      stream.end('Not Found')
      return
    }
    stream.respond(answer.hasId ? { ...answer.headers, 'x-request-id': randomUUID() } : answer.headers)
    stream.end(answer.body)
  }
}

function listen (port, file, cert, key) {
  const answers = loadAnswers(file)
  if (cert === undefined) return http.createServer(replayH1(answers.h1)).listen(port, '127.0.0.1')
  const server = http2.createSecureServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key), allowHTTP1: true })
  // http.createServer's default, which svr sets on its secure server too
  // (keepAliveTimeout): without it the HTTP/1.1 fallback sends no
  // `Keep-Alive: timeout=5`, 23 bytes fewer than svr per answer.
  server.keepAliveTimeout = 5000
  server.on('request', replayH1(answers.h1))
  // The first `request` listener also puts the compatibility layer on every
  // HTTP/2 stream (Http2ServerRequest and Response per stream); taken off
  // again, streams reach only the stream API, and HTTP/1.1 requests still
  // come as `request` events from the HTTP/1 connection handler.
  server.removeAllListeners('stream')
  server.on('stream', replayH2(answers.h2))
  return server.listen(port, '127.0.0.1')
}

if (process.env.BENCH_SINGLE === '1') {
  // One process, no cluster: what bench/bounds.md counts instructions of
  // against svr --single-threaded.
  const [port, file, cert, key] = process.argv.slice(2)
  listen(Number(port), file, cert, key).on('listening', () => console.log(`listening on ${cert === undefined ? 'http' : 'https'}://127.0.0.1:${port}`))
  process.on('SIGTERM', () => process.exit(0))
} else if (cluster.isPrimary) {
  const [port, , cert] = process.argv.slice(2)
  forkBareWorkers(WORKERS, undefined, `${cert === undefined ? 'http' : 'https'}://127.0.0.1:${port}`)
} else {
  process.on('SIGTERM', () => process.exit(0))
  const [port, file, cert, key] = process.argv.slice(2)
  listen(Number(port), file, cert, key)
}
