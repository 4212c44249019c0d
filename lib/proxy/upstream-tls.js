'use strict'

const net = require('node:net')
const { createHash } = require('node:crypto')
const { upstreamUrl } = require('./upstream-entry')
const { parseUpstream } = require('./upstream-url')

// A DNS name as SNI carries it (RFC 6066 3): dot-separated labels of
// letters, digits, "-" (and "_", which internal names use), no port, and
// no trailing dot, which SNI does not allow.
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?'
const HOST_NAME = new RegExp('^' + LABEL + '(?:\\.' + LABEL + ')*$')

/**
 * The TLS settings of a route towards its https:// upstreams, as its
 * worker's pools and the primary's health checks both use them.
 * @typedef {object} UpstreamTls
 * @property {string[]|null} ca the PEM texts of `tls.ca` (read by the
 *   primary, lib/proxy/ca-files.js); null = Node.js's CA store
 * @property {string|null} servername null = the host of the upstream URL
 * @property {boolean} rejectUnauthorized
 */

/**
 * @param {string} value a route's `tls.servername`
 * @returns {string|null} what is wrong with it, for the config validator
 */
function servernameProblem (value) {
  if (net.isIP(value) !== 0) {
    return 'must be a host name: an IP address is not sent as a server name (RFC 6066); null checks the certificate against the upstream\'s address'
  }
  if (value.length > 253 || !HOST_NAME.test(value)) return 'must be a host name such as "app.internal", without scheme, port or trailing dot'
  return null
}

/**
 * undici's `connect` option for the pool or client of one upstream. An
 * https:// upstream gets a connector that sends the route's server name
 * (or, when it has none, the URL's host: undici's own default) whatever
 * the request's Host is, and checks the certificate against it with the
 * route's CAs. An h2c:// upstream's sockets are marked as HTTP/2 ones.
 * @param {import('./upstream-url').UpstreamAddress} address
 * @param {number} timeout ms to connect (and shake hands)
 * @param {UpstreamTls} tls
 * @param {boolean} [http2] the route's `http2`: offer h2 in ALPN
 * @returns {object|Function}
 */
function connectOption (address, timeout, tls, http2 = false) {
  if (address.h2c) return { timeout, useH2c: true }
  if (!address.secure) return { timeout, socketPath: address.socketPath === null ? undefined : address.socketPath }
  // Loaded with the first pool or check, as undici itself is.
  const { buildConnector } = require('undici')
  // The connector, not the pool's allowH2, decides what ALPN offers once
  // it is a function of ours.
  const options = { timeout, rejectUnauthorized: tls.rejectUnauthorized, allowH2: http2 }
  if (tls.ca !== null) options.ca = tls.ca
  const connect = buildConnector(options)
  const servername = tls.servername
  return function connectUpstream (target, callback) {
    return connect({ ...target, servername }, callback)
  }
}

/**
 * The server name undici is given with each request to an upstream. Only
 * its constancy matters (the connector sends the route's): undici would
 * otherwise take it from the Host header, which `preserveHost` makes the
 * client's, and close its connections whenever it changes.
 * @param {import('./upstream-url').UpstreamAddress} address
 * @param {UpstreamTls} tls
 * @returns {string|null} null for an upstream without TLS
 */
function requestServername (address, tls) {
  if (!address.secure) return null
  return tls.servername === null ? address.host : tls.servername
}

/**
 * @param {import('./upstream-url').UpstreamAddress} address
 * @param {UpstreamTls} tls
 * @returns {string} '' for an upstream without TLS, else a digest that two
 *   routes share when they reach it with the same TLS settings
 */
function tlsKey (address, tls) {
  if (!address.secure) return ''
  return createHash('sha256').update(JSON.stringify([tls.ca, tls.servername, tls.rejectUnauthorized])).digest('base64')
}

/**
 * One warning per route that sends requests to https:// upstreams without
 * checking their certificates.
 * @param {object} config validated, defaults filled in
 * @returns {string[]} "<JSON pointer>: <what>"
 */
function proxyTlsWarnings (config) {
  const warnings = []
  config.proxy.forEach((route, number) => {
    if (route.tls.rejectUnauthorized) return
    // Run on the configuration as written: URLs alone or in objects.
    const secure = route.upstreams.map(upstreamUrl).filter((url) => parseUpstream(url).address.secure)
    if (secure.length === 0) return
    warnings.push('/proxy/' + number + '/tls/rejectUnauthorized: the certificates of ' + secure.join(', ') +
      ' are not verified; anyone on the way to them can read and change the traffic (give their CA in tls.ca instead)')
  })
  return warnings
}

module.exports = { servernameProblem, connectOption, requestServername, tlsKey, proxyTlsWarnings }
