'use strict'

const path = require('node:path')

const UNIX_PREFIX = 'unix:'
const SCHEMES = new Set(['http:', 'https:', 'h2c:'])
const SHAPES = 'must be "http://host:port", "https://host:port", "h2c://host:port" or "unix:/path.sock"'

/**
 * An upstream of a proxy route, as the configuration writes it:
 * "http://host:port", "https://host:port", "h2c://host:port" (cleartext
 * HTTP/2 with prior knowledge) or "unix:/absolute/path.sock".
 * @typedef {object} UpstreamAddress
 * @property {string} name the configured string, used in logs, metrics and the status page
 * @property {string} origin what the HTTP client connects to ("http://localhost" for a socket)
 * @property {string|null} socketPath the Unix socket, or null
 * @property {string} host the Host header the upstream gets when the client's is not kept
 * @property {boolean} secure
 * @property {boolean} h2c whether it speaks cleartext HTTP/2 from the first byte
 */

/**
 * @param {string} value an entry of a route's `upstreams`
 * @returns {{address: UpstreamAddress, problem: null} | {address: null, problem: string}}
 */
function parseUpstream (value) {
  if (value.startsWith(UNIX_PREFIX)) {
    const socketPath = value.slice(UNIX_PREFIX.length)
    if (!path.isAbsolute(socketPath)) return failed('a Unix socket upstream must be "unix:" and an absolute path')
    return ok({ name: value, origin: 'http://localhost', socketPath, host: 'localhost', secure: false, h2c: false })
  }
  let url
  try {
    url = new URL(value)
  } catch {
    return failed(SHAPES)
  }
  if (!SCHEMES.has(url.protocol)) return failed('scheme must be http, https or h2c, not ' + JSON.stringify(url.protocol.slice(0, -1)))
  if (url.username !== '' || url.password !== '') return failed('must not carry credentials (set an Authorization header in requestHeaders)')
  // An h2c: URL has no special scheme, so its path may be empty.
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') return failed('must be an origin without path, query or fragment')
  if (url.protocol === 'h2c:') return h2cAddress(value, url.host)
  return ok({ name: value, origin: url.origin, socketPath: null, host: url.host, secure: url.protocol === 'https:', h2c: false })
}

// undici connects to an http: origin (then speaks HTTP/2 on it); parsing
// the host as one checks it as http: would, and lower-cases it.
function h2cAddress (value, host) {
  let url
  try {
    url = new URL('http://' + host)
  } catch {
    return failed(SHAPES)
  }
  if (url.host === '') return failed(SHAPES)
  return ok({ name: value, origin: url.origin, socketPath: null, host: url.host, secure: false, h2c: true })
}

function ok (address) {
  return { address, problem: null }
}

function failed (problem) {
  return { address: null, problem }
}

/**
 * @param {string} value
 * @returns {string|null} what is wrong with an upstream, for the config validator
 */
function upstreamProblem (value) {
  return parseUpstream(value).problem
}

module.exports = { parseUpstream, upstreamProblem }
