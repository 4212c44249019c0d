'use strict'

const net = require('node:net')

const TRAILING_DOTS = /\.+$/

/**
 * The Host header as SVR.JS normalised it before any stage or application
 * code read it: lower-cased, and the trailing dots of the name removed
 * (`Example.COM.:8080` becomes `example.com:8080`); a name of dots only is
 * left as it is.
 * @param {string} host
 * @returns {string}
 */
function normalHost (host) {
  let normal = host.toLowerCase()
  if (normal.charCodeAt(0) !== 91 /* [ */) {
    const colon = lastColon(normal)
    const end = colon === -1 ? normal.length : colon
    if (normal.charCodeAt(end - 1) === 46 /* . */) {
      const name = normal.slice(0, end).replace(TRAILING_DOTS, '')
      if (name !== '') normal = name + normal.slice(end)
    }
  }
  return normal
}

/**
 * The request's host name: lower-cased, without port and trailing dots.
 * SVR.JS matched the raw Host header, port included, so `Example.com:80`
 * escaped a rule for `example.com`.
 * @param {import('node:http').IncomingMessage} req
 * @returns {string} '' when the request has no Host
 */
function requestHostname (req) {
  const host = req.headers.host
  if (host === undefined || host === '') return ''
  return hostnameOf(host)
}

function hostnameOf (host) {
  let name = host
  if (name.charCodeAt(0) === 91 /* [ */) {
    const end = name.indexOf(']')
    name = end === -1 ? name : name.slice(1, end)
  } else {
    const colon = lastColon(name)
    if (colon !== -1) name = name.slice(0, colon)
  }
  name = name.toLowerCase()
  if (name === '.' || name === '..' || name.charCodeAt(name.length - 1) !== 46 /* . */) return name
  return name.replace(TRAILING_DOTS, '')
}

const kHost = Symbol('svr.host')

/**
 * The object that stands for a request's connection, on which the facts
 * of the connection are read and kept: the socket of an HTTP/1.x request,
 * the session's SessionPeer of an HTTP/2 one on the bare stream
 * (lib/http2/stream-request.js), whose socket is a Proxy.
 * @param {{socket: object, peer?: object}} req
 * @returns {{remoteAddress?: string, localAddress?: string, encrypted?: boolean}}
 */
function connectionOf (req) {
  const peer = req.peer
  return peer === undefined ? req.socket : peer
}

/**
 * Normalise the Host header in place (normalHost) and name the request's
 * host (as requestHostname), worked out once per connection for as long as
 * its requests send the same Host header, as the requests of a kept-alive
 * connection almost always do: a new request pays one comparison of
 * strings instead of lower-casing and splitting the header.
 * @param {import('node:http').IncomingMessage} req
 * @param {object} [connection] connectionOf(req)
 * @returns {string} the host name, '' when the request has no Host
 */
function normalizeRequestHost (req, connection = connectionOf(req)) {
  const raw = req.headers.host
  if (typeof raw !== 'string' || raw === '') return ''
  let known = connection[kHost]
  if (known === undefined || known.raw !== raw) {
    const normal = normalHost(raw)
    known = { raw, normal, hostname: hostnameOf(normal) }
    connection[kHost] = known
  }
  if (known.normal !== raw) req.headers.host = known.normal
  return known.hostname
}

/**
 * @param {string} text
 * @returns {number} the index of the last `:`, -1 when there is none
 */
function lastColon (text) {
  // String#lastIndexOf leaves optimised code for a runtime call (about
  // 50 ns); a loop over a host name stays in it.
  for (let i = text.length - 1; i >= 0; i--) if (text.charCodeAt(i) === 58 /* : */) return i
  return -1
}

/**
 * Compile a host pattern once at boot: undefined, '' or '*' match every
 * host; '*.example.com' matches example.com and its subdomains; anything
 * else matches exactly, ignoring case and port.
 * @param {string|undefined} pattern
 * @returns {((hostname: string) => boolean) | null} null when every host matches
 */
function compileHostMatcher (pattern) {
  const parsed = parseHostPattern(pattern)
  if (parsed === null) return null
  if (parsed.wildcard) {
    const apex = parsed.name
    const suffix = '.' + apex
    return (hostname) => hostname === apex || hostname.endsWith(suffix)
  }
  const wanted = parsed.name
  return (hostname) => hostname === wanted
}

/**
 * What a host pattern means, for compileHostMatcher and the host index.
 * @param {string|undefined} pattern
 * @returns {{name: string, wildcard: boolean} | null} null for every host;
 *   wildcard: name is the apex of `*.name`
 */
function parseHostPattern (pattern) {
  if (pattern === undefined || pattern === '' || pattern === '*') return null
  const wanted = stripPort(pattern.toLowerCase())
  if (wanted.startsWith('*.')) return { name: wanted.slice(2), wildcard: true }
  return { name: wanted, wildcard: false }
}

/**
 * Whether a virtual-host entry is limited to some hosts or local addresses
 * (has a `host` or an `ip` that is not a catch-all).
 * @param {{host?: string, ip?: string}} entry
 * @returns {boolean}
 */
function isScoped (entry) {
  return parseHostPattern(entry.host) !== null || compileLocalIpMatcher(entry.ip) !== null
}

function stripPort (pattern) {
  if (pattern.startsWith('[')) return pattern.slice(1, pattern.indexOf(']'))
  const colon = pattern.lastIndexOf(':')
  return colon !== -1 && pattern.indexOf(':') === colon ? pattern.slice(0, colon) : pattern
}

/**
 * @param {string} address as Node reports it (IPv4 may come as ::ffff:a.b.c.d)
 * @returns {string}
 */
function normalizeAddress (address) {
  if (address === undefined || address === null) return ''
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address
}

const kAddresses = Symbol('svr.addresses')

/**
 * The normalized peer and local addresses of a connection, worked out on
 * its first request: a keep-alive connection carries many.
 * @param {import('node:net').Socket} socket
 * @returns {{remote: string, local: string}}
 */
function socketAddresses (socket) {
  let addresses = socket[kAddresses]
  if (addresses === undefined) {
    addresses = { remote: normalizeAddress(socket.remoteAddress), local: normalizeAddress(socket.localAddress) }
    socket[kAddresses] = addresses
  }
  return addresses
}

/**
 * Match the server's local address (the one the client connected to), as
 * the SVR.JS `ip` field of vhost entries does.
 * @param {string|undefined} ip
 * @returns {((localAddress: string) => boolean) | null}
 */
function compileLocalIpMatcher (ip) {
  if (ip === undefined || ip === '' || ip === '*') return null
  const wanted = normalizeAddress(ip)
  return (localAddress) => normalizeAddress(localAddress) === wanted
}

module.exports = { connectionOf, requestHostname, normalizeRequestHost, lastColon, compileHostMatcher, parseHostPattern, isScoped, compileLocalIpMatcher, normalizeAddress, socketAddresses }
