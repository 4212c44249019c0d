'use strict'

const path = require('node:path')

const UNIX_PREFIX = 'unix:'

/**
 * An upstream of a proxy route, as the configuration writes it:
 * "http://host:port", "https://host:port" or "unix:/absolute/path.sock".
 * @typedef {object} UpstreamAddress
 * @property {string} name the configured string, used in logs, metrics and the status page
 * @property {string} origin what the HTTP client connects to ("http://localhost" for a socket)
 * @property {string|null} socketPath the Unix socket, or null
 * @property {string} host the Host header the upstream gets when the client's is not kept
 * @property {boolean} secure
 */

/**
 * @param {string} value an entry of a route's `upstreams`
 * @returns {{address: UpstreamAddress, problem: null} | {address: null, problem: string}}
 */
function parseUpstream (value) {
  if (value.startsWith(UNIX_PREFIX)) {
    const socketPath = value.slice(UNIX_PREFIX.length)
    if (!path.isAbsolute(socketPath)) return failed('a Unix socket upstream must be "unix:" and an absolute path')
    return ok({ name: value, origin: 'http://localhost', socketPath, host: 'localhost', secure: false })
  }
  let url
  try {
    url = new URL(value)
  } catch {
    return failed('must be "http://host:port", "https://host:port" or "unix:/path.sock"')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed('scheme must be http or https, not ' + JSON.stringify(url.protocol.slice(0, -1)))
  if (url.username !== '' || url.password !== '') return failed('must not carry credentials (set an Authorization header in requestHeaders)')
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') return failed('must be an origin without path, query or fragment')
  return ok({ name: value, origin: url.origin, socketPath: null, host: url.host, secure: url.protocol === 'https:' })
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
