'use strict'

const http = require('node:http')
const https = require('node:https')
const http2 = require('node:http2')
const net = require('node:net')
const { createPipeline } = require('./pipeline')
const { parseListenSpec, whenListening } = require('./listen')
const { rawHeaderLines, answerClientError, answerTlsClientError, answerConnectRefused } = require('./client-error')
const { serverString } = require('./version')
const { httpLimitOptions, applyLimits, declaresTooLargeBody } = require('./limits')
const { secureServerOptions, createSniSelector, http2Settings } = require('./tls/options')
const { SvrHttp2Request, SvrHttp2Response } = require('./tls/http2-compat')
const { countBodyBytes } = require('./logging/access-log')
const { upgradeResponse } = require('./upgrade-response')
const { closedUntilIdle } = require('./console/accepting')
const { stateOf } = require('./server-state')

// A keep-alive client may send its next request at the very moment the
// server closes the idle connection, and that request fails (the HTTP/1.1
// keep-alive race). So for a grace period after draining starts, idle
// connections stay open and each request still arriving on them is answered
// with "Connection: close"; only then are the remaining idle ones swept.
const DRAIN_IDLE_GRACE_MS = 1000
const DRAIN_SWEEP_MS = 50
// Responses that count their body bytes for the access log and metrics.
const Http1Response = countBodyBytes(http.ServerResponse)
const Http2Response = countBodyBytes(SvrHttp2Response)

/**
 * Build the servers of one worker (or of the single process), sharing one
 * request pipeline: `main` (HTTP, or HTTPS / HTTP/2 with `secure`) and,
 * with `secure`, `plain`, the HTTP server on `port` that redirects to
 * HTTPS. Listening is a separate step so the caller decides how to report
 * the addresses.
 * @param {object} options {config, configFile, installDir, disableMods, tls}
 * @param {import('./runtime').Runtime} runtime the process's runtime
 * @returns {{main: net.Server, plain: http.Server|null, mods: string[], lifecycle: object}}
 */
function createServers (options, runtime) {
  const { log } = runtime
  const { config } = options
  if (config.enableHTTP2 && !config.secure) {
    log.warn('enableHTTP2 needs secure: browsers speak HTTP/2 only over TLS, so this server speaks HTTP/1.1')
  }
  if (config.secure && config.enableOCSPStapling) log.warn('enableOCSPStapling is not supported; handshakes go without stapled OCSP responses')
  const main = config.secure ? createSecureServer(options) : createPlainServer(config)
  const plain = config.secure && !config.disableNonEncryptedServer ? createPlainServer(config) : null
  const pipeline = createPipeline(options, runtime)
  const servers = { main, plain, mods: pipeline.mods, lifecycle: pipeline.lifecycle }
  usePipeline(servers, pipeline, config)
  return servers
}

function createPlainServer (config) {
  // A missing Host is answered by the pipeline, with a proper error page.
  return http.createServer({ requireHostHeader: false, ServerResponse: Http1Response, ...httpLimitOptions(config) })
}

function createSecureServer (options) {
  const { config } = options
  const sni = createSniSelector(config, options.tls)
  const tlsOptions = secureServerOptions(config, options.tls, sni)
  let server
  if (config.enableHTTP2) {
    server = http2.createSecureServer({
      ...tlsOptions,
      allowHTTP1: true,
      settings: http2Settings(config),
      Http2ServerRequest: SvrHttp2Request,
      Http2ServerResponse: Http2Response
    })
    trackSessions(server, config.keepAliveTimeout)
  } else {
    server = https.createServer({ ...tlsOptions, requireHostHeader: false, ServerResponse: Http1Response, ...httpLimitOptions(config) })
  }
  stateOf(server).sni = sni
  return server
}

// Draining sends each session a GOAWAY. And an HTTP/2 connection with no
// open stream is idle like a kept-alive HTTP/1.1 one, so it is closed after
// keepAliveTimeout as well; the session timer restarts with every frame,
// so one that fires while a response is still being prepared is ignored.
function trackSessions (server, timeout) {
  const state = stateOf(server)
  const sessions = state.sessions = new Set()
  server.on('session', (session) => {
    if (state.draining) {
      session.close()
      return
    }
    sessions.add(session)
    session.once('close', () => sessions.delete(session))
    if (timeout === 0) return
    let open = 0
    session.on('stream', (stream) => {
      open++
      stream.once('close', () => { open-- })
    })
    session.setTimeout(timeout, () => {
      if (open === 0) session.close()
    })
  })
}

/**
 * Route the servers' requests to a pipeline, replacing the previous one.
 * The listeners stay; they read the pipeline of the moment from the
 * servers' state, so a swap is one assignment.
 * @param {{main: net.Server, plain: http.Server|null}} servers from createServers
 * @param {{handleRequest: Function, handleConnect: Function, sendError: Function}} pipeline
 * @param {object} config the configuration the pipeline was built from
 */
function usePipeline (servers, pipeline, config) {
  // A reload in single-process mode keeps the servers (listening, or closed
  // by the console) and their state: the new pipeline is as ready, or as
  // draining, as the one it replaces.
  const previous = servers.lifecycle
  if (previous !== undefined) {
    if (previous.readyAt !== Infinity) pipeline.lifecycle.listening()
    if (previous.draining) pipeline.lifecycle.drain()
  }
  servers.lifecycle = pipeline.lifecycle
  servers.mods = pipeline.mods
  // Answers written on the raw socket carry the configured headers too.
  const headerLines = rawHeaderLines(config, serverString(config))
  const refuseConnect = (req, socket) => answerConnectRefused(socket, headerLines)
  for (const server of servers.plain === null ? [servers.main] : [servers.main, servers.plain]) {
    applyLimits(server, config)
    const state = stateOf(server)
    if (state.route === null) listenForRequests(server, state)
    state.maxBody = config.maxRequestBodySize
    // The redirecting server is no proxy, as in SVR.JS.
    const onConnect = server === servers.main || config.disableToHTTPSRedirect ? pipeline.handleConnect : refuseConnect
    state.route = { pipeline, headerLines, onConnect }
  }
}

// Installed once per server: every event goes to the route of the moment.
function listenForRequests (server, state) {
  server.on('clientError', (err, socket) => answerClientError(err, socket, state.route.headerLines, state.route.pipeline.runtime))
  if (state.sni !== null) server.on('tlsClientError', (err, socket) => answerTlsClientError(err, socket, state.route.headerLines, state.route.pipeline.runtime))
  server.on('connect', function onConnectEvent (req, socket, head) {
    // An HTTP/2 CONNECT comes with a response object, not a socket, and no
    // mod API tunnels through an HTTP/2 stream. An extended CONNECT (RFC
    // 8441, a WebSocket) is a request like others, for a proxy route.
    if (req.httpVersionMajor !== 2) state.route.onConnect(req, socket, head)
    else if (req.headers[':protocol'] !== undefined) onRequest(req, socket)
    else state.route.pipeline.sendError(req, socket, 501)
  })
  // Upgrade requests (WebSocket) go through the pipeline too, with a
  // response on their socket, so that a proxy route can tunnel them.
  server.on('upgrade', function onUpgrade (req, socket, head) {
    onRequest(req, upgradeResponse(req, socket, head, Http1Response))
  })
  server.on('request', onRequest)
  function onRequest (req, res) {
    const { pipeline } = state.route
    const { runtime } = pipeline
    // Harmless on an HTTP/2 response, where the session ends by GOAWAY.
    if (state.draining) res.shouldKeepAlive = false
    else runtime.balance.shedIfOverShare(req, res)
    runtime.accessLog.observe(req, res)
    if (declaresTooLargeBody(req, state.maxBody)) {
      // The body is not read, so the connection cannot carry another request.
      res.shouldKeepAlive = false
      pipeline.sendError(req, res, 413)
      return
    }
    pipeline.handleRequest(req, res)
  }
  // Only "Expect: 100-continue" is defined (RFC 9110 §10.1.1); Node hands
  // anything else here.
  server.on('checkExpectation', function onExpectation (req, res) {
    state.route.pipeline.runtime.accessLog.observe(req, res)
    state.route.pipeline.sendError(req, res, 417)
  })
}

/**
 * Give a running secure server new certificates (single-threaded reload;
 * a cluster replaces its workers instead). Connections already open keep
 * the certificate they were made with.
 * @param {{main: net.Server}} servers
 * @param {object} options runtime options with the new config and tls material
 */
function useCertificates (servers, options) {
  const server = servers.main
  const { sni } = stateOf(server)
  if (sni === null) return
  server.setSecureContext(secureServerOptions(options.config, options.tls))
  sni.update(options.config, options.tls)
}

/**
 * Listen with every server: `main` on `sport` when secure, else on `port`;
 * `plain` on `port`.
 * @param {{main: net.Server, plain: http.Server|null}} servers
 * @param {object} config
 * @returns {Promise<{main: string|object, plain: string|object|null}>} bound addresses
 */
async function listenServers (servers, config) {
  const main = await listen(servers.main, config.secure ? config.sport : config.port)
  const plain = servers.plain === null ? null : await listen(servers.plain, config.port)
  servers.lifecycle.listening()
  return { main, plain }
}

/**
 * @param {net.Server} server
 * @param {number|string} portValue a `port`/`sport` value
 * @returns {Promise<string|object>} the bound address as server.address() gives it
 */
function listen (server, portValue) {
  const spec = parseListenSpec(portValue)
  return whenListening(server, () => server.listen(spec)).then(() => server.address(), (err) => {
    err.listenSpec = spec
    throw err
  })
}

/**
 * Drain every server (see drain).
 * @param {{main: net.Server, plain: http.Server|null}} servers
 * @returns {Promise<void>}
 */
async function drainServers (servers) {
  servers.lifecycle.drain()
  await Promise.all([drain(servers.main), servers.plain === null ? null : drain(servers.plain)])
}

/**
 * Stop accepting connections, let in-flight requests finish (their
 * responses carry Connection: close, and HTTP/2 sessions get a GOAWAY)
 * and close keep-alive connections as soon as they are idle.
 * @param {net.Server} server
 * @returns {Promise<void>} settles when every connection has ended
 */
function drain (server) {
  const state = stateOf(server)
  state.draining = true
  if (state.sessions !== null) {
    for (const session of state.sessions) session.close()
  }
  return new Promise((resolve) => {
    let sweep = null
    const grace = setTimeout(() => {
      server.closeIdleConnections()
      sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS)
    }, DRAIN_IDLE_GRACE_MS)
    function ended () {
      clearTimeout(grace)
      clearInterval(sweep)
      resolve()
    }
    // A server the console has closed stopped listening already; its close
    // callback says when the last connection has ended.
    const closedByConsole = closedUntilIdle(server)
    if (closedByConsole !== null) {
      closedByConsole.then(ended)
      return
    }
    // http.Server#close() would close idle connections at once; the net.Server
    // method only stops accepting, which is what the grace period needs. Its
    // callback runs once every connection has ended, or at once with
    // ERR_SERVER_NOT_RUNNING when listen never succeeded.
    net.Server.prototype.close.call(server, ended)
  })
}

/**
 * A graceful shutdown: the health path reports "draining" at once, requests
 * go on being served for `delay` ms so that load balancers polling it stop
 * sending, then the servers drain.
 * @param {{main: net.Server, plain: http.Server|null, lifecycle: object}} servers
 * @param {number} delay ms, the config's shutdownDelay
 * @returns {Promise<void>} settles when every connection has ended
 */
async function shutDown (servers, delay) {
  servers.lifecycle.drain()
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
  return drainServers(servers)
}

module.exports = { createServers, usePipeline, useCertificates, listenServers, listen, drainServers, drain, shutDown }
