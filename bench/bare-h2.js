'use strict'

// The HTTP/2 baseline: the least Node's HTTP/2 can do for a static file —
// two cluster workers, http2.createSecureServer on the stream API
// (stream.respond and stream.end), the 1 KiB file read once and answered
// from memory for every path, with the headers a file server sends. With
// "svr-headers" it also sends the headers svr adds to every file by
// default (Server, a random X-Request-Id, X-Content-Type-Options, ETag,
// Accept-Ranges), to tell what they cost from what svr's own code costs.
// node bench/bare-h2.js PORT FILE CERT KEY [svr-headers]

const cluster = require('node:cluster')
const crypto = require('node:crypto')
const fs = require('node:fs')
const http2 = require('node:http2')

const WORKERS = 2

if (cluster.isPrimary) {
  const [port] = process.argv.slice(2)
  let ready = 0
  for (let i = 0; i < WORKERS; i++) {
    cluster.fork().on('listening', () => {
      if (++ready === WORKERS) console.log('listening on https://127.0.0.1:' + port)
    })
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM')
    process.exit(0)
  })
} else {
  const [port, file, cert, key, extra] = process.argv.slice(2)
  const body = fs.readFileSync(file)
  const stat = fs.statSync(file)
  const mtime = stat.mtime.toUTCString()
  const etag = '"' + stat.size.toString(16) + '-' + stat.mtimeMs.toString(16) + '"'
  const server = http2.createSecureServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) })
  server.on('stream', extra === 'svr-headers'
    ? (stream) => {
        stream.respond({
          ':status': 200,
          server: 'svr',
          'x-request-id': crypto.randomUUID(),
          'x-content-type-options': 'nosniff',
          etag,
          'accept-ranges': 'bytes',
          'last-modified': mtime,
          'content-type': 'text/html; charset=utf-8',
          'content-length': body.length
        })
        stream.end(body)
      }
    : (stream) => {
        stream.respond({
          ':status': 200,
          'content-type': 'text/html; charset=utf-8',
          'content-length': body.length,
          'last-modified': mtime
        })
        stream.end(body)
      })
  server.listen(Number(port), '127.0.0.1')
}
