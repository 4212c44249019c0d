'use strict'

const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const { svrError } = require('./errors')

const BRACKETED = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/
const HOST_PORT = /^([^:[\]/\\]+):(\d{1,5})$/
const DIGITS = /^\d{1,5}$/
const HOST_PORT_LIKE = /^(\[[^\]]*\]|[^/\\:[\]]+):(\d+)$/

/**
 * Turn a `port`/`sport` value (number, "8080", "ip:port", "[v6]:port" or a
 * socket path) into options for `server.listen()`.
 * @param {number|string} value
 * @returns {{port: number, host?: string} | {path: string}}
 */
function parseListenSpec (value) {
  if (typeof value === 'number') return { port: value }
  if (DIGITS.test(value)) return { port: Number(value) }
  let match = BRACKETED.exec(value)
  if (match !== null && net.isIPv6(match[1])) return { host: stripMappedPrefix(match[1]), port: Number(match[2]) }
  match = HOST_PORT.exec(value)
  if (match !== null && net.isIPv4(match[1])) return { host: match[1], port: Number(match[2]) }
  return { path: value }
}

// SVR.JS binds "[::ffff:1.2.3.4]:80" as plain IPv4, and so do we.
function stripMappedPrefix (host) {
  return host.toLowerCase().startsWith('::ffff:') && net.isIPv4(host.slice(7)) ? host.slice(7) : host
}

/**
 * @param {{port?: number, host?: string, path?: string}} spec
 * @returns {string} human form of what we tried to bind
 */
function describeSpec (spec) {
  if (spec.path !== undefined) return 'unix:' + spec.path
  if (spec.host === undefined) return 'port ' + spec.port
  return formatHostPort(spec.host, spec.port)
}

function formatHostPort (host, port) {
  return (net.isIPv6(host) ? '[' + host + ']' : host) + ':' + port
}

/**
 * @param {string|{address: string, port: number}} address what server.address() returned
 * @param {string} scheme 'http' or 'https'
 * @returns {string} a URL (or unix: path) to print in the startup line
 */
function formatAddress (address, scheme) {
  if (typeof address === 'string') return 'unix:' + address
  return scheme + '://' + formatHostPort(address.address, address.port)
}

/**
 * The start-up lines naming where svr listens: the main server first (its
 * line is the one scripts and tests look for), then the plain-HTTP one
 * that a secure setup keeps on `port`.
 * @param {{main: string|object, plain?: string|object|null}} addresses bound addresses
 * @param {object} config
 * @returns {string[]}
 */
function listeningLines (addresses, config) {
  const lines = ['listening on ' + formatAddress(addresses.main, config.secure ? 'https' : 'http')]
  if (addresses.plain != null) {
    const role = config.disableToHTTPSRedirect ? 'plain HTTP' : 'plain HTTP, redirects to HTTPS'
    lines.push('listening on ' + formatAddress(addresses.plain, 'http') + ' (' + role + ')')
  }
  return lines
}

const LISTEN_HINTS = {
  EADDRINUSE: 'address already in use: another process listens there; stop it or choose another port',
  EACCES: 'permission denied: ports below 1024 need root or CAP_NET_BIND_SERVICE (the systemd unit in packaging/ grants it), and a socket path needs a writable directory',
  EADDRNOTAVAIL: 'address not available: the IP address is not assigned to any interface of this machine',
  ENOTFOUND: 'host name not found',
  EINVAL: 'invalid address for this socket type'
}

/**
 * One line that names the address and the likely fix.
 * @param {Error & {code?: string}} err
 * @returns {string}
 */
function explainListenError (err) {
  return LISTEN_HINTS[err.code] || err.message
}

/**
 * @param {Error & {code?: string, listenSpec?: object}} err from server.listen()
 * @returns {SvrError} SVR_ERR_LISTEN naming the address and the likely fix
 */
function listenError (err) {
  const where = err.listenSpec ? describeSpec(err.listenSpec) : 'the configured address'
  return svrError('SVR_ERR_LISTEN', [where, explainListenError(err)], { cause: err })
}

/**
 * A unix socket left behind by a crashed server makes listen() fail with
 * EADDRINUSE forever; remove it when nothing answers on it any more.
 * @param {string} path
 */
async function removeStaleSocket (path) {
  let stats
  try {
    stats = await fs.lstat(path)
  } catch {
    return
  }
  if (!stats.isSocket()) return
  const alive = await new Promise((resolve) => {
    const probe = net.connect(path)
    probe.once('connect', () => { probe.destroy(); resolve(true) })
    probe.once('error', (err) => resolve(err.code !== 'ECONNREFUSED'))
  })
  if (!alive) await fs.unlink(path).catch(() => {})
}

/**
 * Remove the stale Unix sockets of every address `config` listens on.
 * @param {object} config
 * @returns {Promise<void>}
 */
async function removeStaleSockets (config) {
  for (const value of config.secure ? [config.port, config.sport] : [config.port]) {
    const spec = parseListenSpec(value)
    if (spec.path !== undefined) await removeStaleSocket(spec.path)
  }
}

/**
 * Start a server listening and settle once it listens, or fails to.
 * @param {import('node:net').Server} server
 * @param {() => void} start makes the server listen (server.listen(...), or
 *   the adoption of a handle)
 * @returns {Promise<void>} rejects with the server's 'error'
 */
function whenListening (server, start) {
  return new Promise((resolve, reject) => {
    function onError (err) {
      server.removeListener('listening', onListening)
      reject(err)
    }
    function onListening () {
      server.removeListener('error', onError)
      resolve()
    }
    server.once('error', onError)
    server.once('listening', onListening)
    start()
  })
}

// What parseListenSpec would take as a port must be in range, and
// what it would take as a socket path must not be a mistyped address.
function listenProblem (value) {
  const forms = 'must be a port, "ip:port", "[v6]:port" or a socket path'
  if (value === '') return forms + ', not empty'
  const spec = parseListenSpec(value)
  if (spec.path === undefined) return spec.port <= 65535 ? null : 'port ' + spec.port + ' is out of range (0-65535)'
  if (!value.includes('/') && net.isIP(value) !== 0) return 'an IP address needs a port: "ip:port" or "[v6]:port"'
  const match = HOST_PORT_LIKE.exec(value)
  if (match === null) return null
  const host = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1]
  if (net.isIP(host) === 0) return forms + ': ' + JSON.stringify(host) + ' is not an IP address (host names are not resolved)'
  if (Number(match[2]) > 65535) return 'port ' + match[2] + ' is out of range (0-65535)'
  return forms + ': write IPv4 as "ip:port" and IPv6 as "[v6]:port", without a zone'
}

function resolveSocketPath (value, configDir) {
  if (typeof value !== 'string' || parseListenSpec(value).path === undefined) return value
  return path.resolve(configDir, value)
}

// `port` and `sport` to the configuration loader (lib/config/load.js).
const listenConfig = {
  keywords: { svrListen: listenProblem },
  resolve (config, configDir) {
    config.port = resolveSocketPath(config.port, configDir)
    config.sport = resolveSocketPath(config.sport, configDir)
  }
}

module.exports = { listenConfig, whenListening, parseListenSpec, describeSpec, formatAddress, listeningLines, explainListenError, listenError, removeStaleSocket, removeStaleSockets }
