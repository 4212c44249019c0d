'use strict'

const http = require('node:http')
const https = require('node:https')
const http2 = require('node:http2')
const net = require('node:net')
const { createPipeline } = require('../pipeline/pipeline')
const { rawHeaderLines, answerClientError, answerTlsClientError, answerConnectRefused } = require('./client-error')
const { serverString } = require('../version')
const { httpLimitOptions, applyLimits, declaresTooLargeBody } = require('./limits')
const { secureServerOptions, createSniSelector, http2Settings, offerAcmeTls } = require('../tls/options')
const { SvrHttp2Request, Http2Response } = require('../http2/compat')
const { SvrServerResponse } = require('../pipeline/request/tolerant-response')
const { serveStreams, closeWhenIdle } = require('../http2/streams')
const { upgradeResponse } = require('./upgrade-response')
const { closedUntilIdle } = require('./accepting')
const { stateOf } = require('./server-state')
const { shareSessions } = require('../tls/session-cache')

// A keep-alive client may send its next request at the very moment the
// server closes the idle connection, and that request fails (the HTTP/1.1
// keep-alive race). So for a grace period after draining starts, idle
// connections stay open and each request still arriving on them is answered
// with "Connection: close"; only then are the remaining idle ones swept.
const DRAIN_IDLE_GRACE_MS = 1000
const DRAIN_SWEEP_MS = 50

/**
 * Build the servers of one worker, sharing one
 * request pipeline: `main` (HTTP, or HTTPS / HTTP/2 with `secure`) and,
 * with `secure`, `plain`, the HTTP server on `port` that redirects to
 * HTTPS. Listening is a separate step so the caller decides how to report
 * the addresses.
 * @param {object} options {config, configFile, installDir, disableMods, tls}
 * @param {import('./runtime').Runtime} runtime the process's runtime
 * @returns {{main: net.Server, plain: http.Server|null, mods: string[], commands: Map<string, object[]>, lifecycle: object}}
 */
function createServers (options, runtime) {
  const { log } = runtime
  const { config } = options
  if (config.enableHTTP2 && !config.secure) {
    log.warn('enableHTTP2 needs secure: browsers speak HTTP/2 only over TLS, so this server speaks HTTP/1.1')
  }
  if (config.secure && config.enableOCSPStapling) log.warn('enableOCSPStapling is not supported; handshakes go without stapled OCSP responses')
  const main = config.secure ? createSecureServer(options, runtime.certificates) : createPlainServer(config)
  const plain = config.secure && !config.disableNonEncryptedServer ? createPlainServer(config) : null
  runtime.balance.watch(main)
  if (plain !== null) runtime.balance.watch(plain)
  const pipeline = createPipeline(options, runtime)
  const servers = { main, plain, mods: pipeline.mods, commands: pipeline.commands, lifecycle: pipeline.lifecycle }
  routeTo(servers, pipeline, config)
  return servers
}

function createPlainServer (config) {
  // A missing Host is answered by the pipeline, with a proper error page.
  return http.createServer({ requireHostHeader: false, ServerResponse: SvrServerResponse, ...httpLimitOptions(config) })
}

function createSecureServer (options, certificates) {
  const { config } = options
  const sni = createSniSelector(config, options.tls, certificates)
  const tlsOptions = secureServerOptions(config, options.tls, sni)
  let server
  if (config.enableHTTP2) {
    server = http2.createSecureServer({
      ...tlsOptions,
      allowHTTP1: true,
      Http1ServerResponse: SvrServerResponse,
      settings: http2Settings(config),
      Http2ServerRequest: SvrHttp2Request,
      Http2ServerResponse: Http2Response
    })
    trackSessions(server, config.keepAliveTimeout)
  } else {
    server = https.createServer({ ...tlsOptions, requireHostHeader: false, ServerResponse: SvrServerResponse, ...httpLimitOptions(config) })
  }
  offerAcmeTls(server, config)
  stateOf(server).sni = sni
  return server
}

// Draining sends each session a GOAWAY. And an HTTP/2 connection with no
// open stream is idle like a kept-alive HTTP/1.1 one, so it is closed after
// keepAliveTimeout as well (lib/http2/streams.js).
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
    if (timeout !== 0) closeWhenIdle(session, timeout)
  })
}

// Every server event goes to the route in the servers' state: the
// pipeline, the headers of answers written on the raw socket, and what a
// CONNECT gets.
function routeTo (servers, pipeline, config) {
  // Answers written on the raw socket carry the configured headers too.
  const headerLines = rawHeaderLines(config, serverString(config))
  const refuseConnect = (req, socket) => answerConnectRefused(socket, headerLines)
  for (const server of servers.plain === null ? [servers.main] : [servers.main, servers.plain]) {
    applyLimits(server, config)
    const state = stateOf(server)
    state.maxBody = config.maxRequestBodySize
    // The redirecting server is no proxy, as in SVR.JS.
    const onConnect = server === servers.main || config.disableToHTTPSRedirect ? pipeline.handleConnect : refuseConnect
    state.route = { pipeline, headerLines, onConnect }
    listenForRequests(server, state)
  }
}

// The listeners of one server.
function listenForRequests (server, state) {
  server.on('clientError', (err, socket) => answerClientError(err, socket, state.route.headerLines, state.route.pipeline.runtime))
  if (state.sni !== null) {
    server.on('tlsClientError', (err, socket) => answerTlsClientError(err, socket, state.route.headerLines, state.route.pipeline.runtime))
    shareSessions(server, () => state.route.pipeline.runtime.coordinator, state.route.pipeline.runtime.knownSessions)
  }
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
    onRequest(req, upgradeResponse(req, socket, head, SvrServerResponse))
  })
  function onRequest (req, res) {
    const { pipeline } = state.route
    const { runtime } = pipeline
    // Harmless on an HTTP/2 response, where the session ends by GOAWAY.
    if (state.draining) res.shouldKeepAlive = false
    else runtime.balance.shedIfOverShare(req, res)
    if (declaresTooLargeBody(req, state.maxBody)) {
      // The body is not read, so the connection cannot carry another request.
      res.shouldKeepAlive = false
      pipeline.sendError(req, res, 413)
      return
    }
    pipeline.handleRequest(req, res)
  }
  server.on('request', onRequest)
  // HTTP/2 requests start on the bare stream (lib/http2/streams.js).
  if (state.sessions !== null) serveStreams(server, onRequest)
  // Only "Expect: 100-continue" is defined (RFC 9110 §10.1.1); Node hands
  // anything else here.
  server.on('checkExpectation', function onExpectation (req, res) {
    state.route.pipeline.sendError(req, res, 417)
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

module.exports = { createServers, drainServers, drain, shutDown }
