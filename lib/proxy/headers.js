'use strict'

const { forwardingChain } = require('../access/client-address')

// Hop-by-hop fields (RFC 9110 7.6.1, and the Keep-Alive and
// Proxy-Connection of older agents): meaningful for one connection only,
// never forwarded in either direction. Those a Connection header names are
// dropped as well.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings'])
// Rebuilt by the proxy (forwarding fields, the request id), or answered by
// it (Expect: svr sends the 100 Continue itself and streams the body).
// X-Real-IP is one of them: applications read it as the client, so a
// client's own value must never get through.
const REQUEST_OWN = new Set(['host', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded',
  'via', 'x-request-id', 'x-real-ip'])
// The client keeps svr's Server and request id.
const RESPONSE_OWN = new Set(['server', 'x-request-id', 'via'])
const VIA_VERSIONS = { '1.0': '1.0', '1.1': '1.1', '2.0': '2' }

/**
 * @param {string|string[]|undefined} value a Connection header
 * @returns {Set<string>|null} the field names it lists, lower-cased
 */
function connectionTokens (value) {
  if (value === undefined) return null
  const text = Array.isArray(value) ? value.join(',') : value
  const names = new Set()
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase()
    if (name !== '') names.add(name)
  }
  return names
}

/**
 * Copy the end-to-end fields of a header object, leaving out hop-by-hop
 * fields, those named in Connection, pseudo-headers (HTTP/2) and `own`.
 * @param {object} headers lower-cased names
 * @param {Set<string>} own fields the proxy sets itself
 * @returns {object}
 */
function endToEnd (headers, own) {
  const connection = headers.connection
  // Most agents send one token ("keep-alive", "close"): compared as it is,
  // without a set per message.
  const single = typeof connection === 'string' && connection.indexOf(',') === -1 ? connection.trim().toLowerCase() : null
  const named = single === null ? connectionTokens(connection) : null
  const out = {}
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 58 /* : */ || HOP_BY_HOP.has(name) || own.has(name) || name === single) continue
    if (named !== null && named.has(name)) continue
    out[name] = headers[name]
  }
  return out
}

/**
 * The headers of the request forwarded to an upstream.
 * @param {import('node:http').IncomingMessage} req
 * @param {object} ctx the request context
 * @param {object} route a compiled route (lib/proxy/routes.js)
 * @param {import('./upstream-url').UpstreamAddress} address the upstream picked
 * @returns {object}
 */
function requestHeaders (req, ctx, route, address) {
  const incoming = req.headers
  const out = endToEnd(incoming, REQUEST_OWN)
  const host = incoming.host
  out.host = route.preserveHost && typeof host === 'string' && host !== '' ? host : address.host
  const chain = forwardingChain(ctx, req)
  const trusted = ctx.fromTrustedProxy
  const proto = trusted && typeof incoming['x-forwarded-proto'] === 'string' ? incoming['x-forwarded-proto'] : ctx.secure ? 'https' : 'http'
  const forwardedHost = trusted && typeof incoming['x-forwarded-host'] === 'string' ? incoming['x-forwarded-host'] : host
  if (chain.length !== 0) {
    out['x-forwarded-for'] = chain.join(', ')
    out['x-real-ip'] = chain[0]
  }
  out['x-forwarded-proto'] = proto
  if (typeof forwardedHost === 'string' && forwardedHost !== '') out['x-forwarded-host'] = forwardedHost
  // The protocol and host the client used, as X-Forwarded-Proto and
  // X-Forwarded-Host say: behind a trusted TLS terminator, svr's own
  // socket is plain HTTP but the client's request was not.
  out.forwarded = forwardedElements(chain, forwardedHost, proto)
  out.via = appendVia(incoming.via, req.httpVersion, route.pseudonym)
  out['x-request-id'] = ctx.requestId
  // TE is hop-by-hop, but "trailers" in it says the client reads trailer
  // fields, which the upstream's answer then reaches it with: gRPC servers
  // refuse a call without it.
  if (acceptsTrailers(incoming.te)) out.te = 'trailers'
  applyOverrides(out, route.requestHeaders)
  return out
}

/**
 * @param {string|string[]|undefined} te the client's TE header
 * @returns {boolean} whether it lists "trailers" (RFC 9110 10.1.4)
 */
function acceptsTrailers (te) {
  if (te === undefined) return false
  const text = Array.isArray(te) ? te.join(',') : te
  if (text === 'trailers') return true
  for (const member of text.split(',')) {
    const semicolon = member.indexOf(';')
    if ((semicolon === -1 ? member : member.slice(0, semicolon)).trim().toLowerCase() === 'trailers') return true
  }
  return false
}

/**
 * The upstream's response headers as the client gets them.
 * @param {object} headers undici's response headers (lower-cased, arrays for repeated fields)
 * @param {object} route a compiled route
 * @returns {object}
 */
function responseHeaders (headers, route) {
  const out = endToEnd(headers, RESPONSE_OWN)
  out.via = appendVia(headers.via, '1.1', route.pseudonym)
  applyOverrides(out, route.responseHeaders)
  return out
}

/**
 * The upstream's trailer fields as the client gets them: without
 * hop-by-hop fields (which HTTP/2 forbids) and those svr answers with.
 * @param {object} trailers lower-cased names
 * @returns {object}
 */
function responseTrailers (trailers) {
  return endToEnd(trailers, RESPONSE_OWN)
}

// RFC 7239: one element per hop of the chain, the last one (this proxy's)
// with the host and protocol it received.
function forwardedElements (chain, host, proto) {
  const hops = chain.length === 0 ? ['for=unknown'] : chain.map((address) => 'for=' + forwardedNode(address))
  let last = hops[hops.length - 1] + ';proto=' + proto
  if (typeof host === 'string' && host !== '') last += ';host=' + quoteIfNeeded(host)
  hops[hops.length - 1] = last
  return hops.join(', ')
}

function forwardedNode (address) {
  return address.includes(':') ? '"[' + address + ']"' : address
}

// A token stays bare; anything else is a quoted-string.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const QUOTED_SPECIALS = /["\\]/g
function quoteIfNeeded (value) {
  if (TOKEN.test(value)) return value
  // The usual host:port has nothing to escape.
  const escaped = value.indexOf('"') === -1 && value.indexOf('\\') === -1 ? value : value.replace(QUOTED_SPECIALS, '\\$&')
  return '"' + escaped + '"'
}

function appendVia (previous, version, pseudonym) {
  const own = (VIA_VERSIONS[version] || version) + ' ' + pseudonym
  if (previous === undefined || previous === '') return own
  return (Array.isArray(previous) ? previous.join(', ') : previous) + ', ' + own
}

function applyOverrides (headers, overrides) {
  for (const [name, value] of overrides) {
    if (value === null) delete headers[name]
    else headers[name] = value
  }
}

module.exports = { requestHeaders, responseHeaders, responseTrailers, connectionTokens, endToEnd, HOP_BY_HOP }
