'use strict'

const fs = require('node:fs/promises')
const http = require('node:http')
const https = require('node:https')
const { whenListening } = require('../../lib/listen')

/**
 * An upstream for proxy tests, in the test process, on loopback (or a Unix
 * socket). By default it answers every request with JSON describing it:
 * the upstream's name, method, target, headers and body length. It can be
 * stopped (every connection cut) and started again on the same port. With
 * `tls` (files from makeCertificate in test/helpers/tls.js) it speaks
 * HTTPS, and its origin is https://.
 * @param {object} t node:test context (stops it after the test)
 * @param {{name?: string, port?: number, socketPath?: string, tls?: {cert: string, key: string},
 *   handler?: (req: http.IncomingMessage, res: http.ServerResponse, upstream: Upstream) => void}} [opts]
 * @returns {Promise<Upstream>}
 */
async function startUpstream (t, opts = {}) {
  const upstream = new Upstream(opts)
  await upstream.start()
  t.after(() => upstream.stop())
  return upstream
}

class Upstream {
  constructor ({ name = 'up', port = 0, socketPath, tls, handler = echo }) {
    this.name = name
    this.port = port
    this.socketPath = socketPath
    this.tls = tls
    this.handler = handler
    this.server = null
    this.hits = 0
  }

  get origin () {
    if (this.socketPath !== undefined) return 'unix:' + this.socketPath
    return (this.tls === undefined ? 'http' : 'https') + '://127.0.0.1:' + this.port
  }

  async start () {
    const onRequest = (req, res) => {
      this.hits++
      this.handler(req, res, this)
    }
    const server = this.tls === undefined
      ? http.createServer(onRequest)
      : https.createServer({ cert: await fs.readFile(this.tls.cert), key: await fs.readFile(this.tls.key) }, onRequest)
    this.server = server
    const spec = this.socketPath === undefined ? { host: '127.0.0.1', port: this.port } : { path: this.socketPath }
    await whenListening(server, () => server.listen(spec))
    if (this.socketPath === undefined) this.port = server.address().port
  }

  /** Stop listening and cut every open connection at once. */
  async stop () {
    const server = this.server
    if (server === null) return
    this.server = null
    const closed = new Promise((resolve) => server.close(resolve))
    server.closeAllConnections()
    await closed
  }
}

/**
 * The default handler: JSON about the request, after its whole body.
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 * @param {Upstream} upstream
 */
function echo (req, res, upstream) {
  let length = 0
  req.on('data', (chunk) => { length += chunk.length })
  req.on('end', () => {
    const body = JSON.stringify({ name: upstream.name, method: req.method, url: req.url, headers: req.headers, length })
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Upstream': upstream.name })
    res.end(body)
  })
}

module.exports = { startUpstream, echo }
