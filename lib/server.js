'use strict'

const http = require('node:http')
const net = require('node:net')
const { createPipeline } = require('./pipeline')
const { parseListenSpec } = require('./listen')
const { answerClientError } = require('./client-error')
const { serverString } = require('./version')
const { observeRequest } = require('./logging/access-log')

// A keep-alive client may send its next request at the very moment the
// server closes the idle connection, and that request fails (the HTTP/1.1
// keep-alive race). So for a grace period after draining starts, idle
// connections stay open and each request still arriving on them is answered
// with "Connection: close"; only then are the remaining idle ones swept.
const DRAIN_IDLE_GRACE_MS = 1000
const DRAIN_SWEEP_MS = 50

/**
 * Build the HTTP server of one worker (or of the single process) with its
 * request pipeline. Listening is a separate step so the caller decides how
 * to report the address.
 * @param {object} options {config, configFile, installDir, disableMods}
 * @param {object} log process logger
 * @returns {http.Server & {svrDraining: boolean, svrHandlers: string[]}}
 */
function createServer (options, log) {
  const signature = serverString(options.config)
  // A missing Host is answered by the pipeline, with a proper error page.
  const server = http.createServer({ requireHostHeader: false })
  server.svrDraining = false
  const pipeline = createPipeline(options, log)
  // The application code this worker runs, for the start-up log.
  server.svrHandlers = pipeline.handlers
  usePipeline(server, pipeline)
  server.on('clientError', (err, socket) => answerClientError(err, socket, signature))
  return server
}

/**
 * Route the server's requests to a pipeline, replacing the previous one.
 * @param {http.Server} server
 * @param {(req, res) => void} pipeline
 */
function usePipeline (server, pipeline) {
  server.removeAllListeners('request')
  server.removeAllListeners('checkExpectation')
  server.removeAllListeners('connect')
  server.on('connect', pipeline.handleConnect)
  server.on('request', function onRequest (req, res) {
    if (server.svrDraining) res.shouldKeepAlive = false
    observeRequest(req, res)
    pipeline.handleRequest(req, res)
  })
  // Only "Expect: 100-continue" is defined (RFC 9110 §10.1.1); Node hands
  // anything else here.
  server.on('checkExpectation', function onExpectation (req, res) {
    observeRequest(req, res)
    pipeline.sendError(req, res, 417)
  })
}

/**
 * @param {http.Server} server
 * @param {number|string} portValue the config's `port` value
 * @returns {Promise<string|object>} the bound address as server.address() gives it
 */
function listen (server, portValue) {
  const spec = parseListenSpec(portValue)
  return new Promise((resolve, reject) => {
    function onError (err) {
      server.removeListener('listening', onListening)
      err.listenSpec = spec
      reject(err)
    }
    function onListening () {
      server.removeListener('error', onError)
      resolve(server.address())
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(spec)
  })
}

/**
 * Stop accepting connections, let in-flight requests finish (their
 * responses carry Connection: close) and close keep-alive connections as
 * soon as they are idle.
 * @param {http.Server} server
 * @returns {Promise<void>} settles when every connection has ended
 */
function drain (server) {
  server.svrDraining = true
  return new Promise((resolve) => {
    let sweep = null
    const grace = setTimeout(() => {
      server.closeIdleConnections()
      sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS)
    }, DRAIN_IDLE_GRACE_MS)
    // http.Server#close() would close idle connections at once; the net.Server
    // method only stops accepting, which is what the grace period needs. Its
    // callback runs once every connection has ended, or at once with
    // ERR_SERVER_NOT_RUNNING when listen never succeeded.
    net.Server.prototype.close.call(server, () => {
      clearTimeout(grace)
      clearInterval(sweep)
      resolve()
    })
  })
}

module.exports = { createServer, usePipeline, listen, drain }
