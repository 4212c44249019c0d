'use strict'

const { lastColon } = require('../../hosts/vhost')

/**
 * The request URL in the shape of Node's legacy `url.parse()` result, which
 * SVR.JS scripts and mods receive as `uobject`. As in SVR.JS, query values
 * are not decoded and the query object has no prototype.
 * @param {import('node:http').IncomingMessage} req
 * @param {{pathname: string, search: string}} ctx
 * @returns {object}
 */
function legacyUrlObject (req, ctx) {
  const origin = originOf(req)
  const path = ctx.pathname + ctx.search
  return {
    protocol: origin.protocol,
    slashes: true,
    auth: null,
    host: origin.host,
    port: origin.port,
    hostname: origin.hostname,
    hash: null,
    search: ctx.search || null,
    query: parseQuery(ctx.search),
    pathname: ctx.pathname,
    path,
    href: origin.prefix + path
  }
}

const kOrigin = Symbol('svr.urlOrigin')

/**
 * The fields of the URL object that come from the connection and its Host
 * header, worked out once per connection for as long as its requests send
 * the same Host (those of a kept-alive connection almost always do).
 * @param {import('node:http').IncomingMessage} req
 * @returns {{raw: string|undefined, protocol: string, host: string|null, hostname: string|null, port: string|null, prefix: string}}
 */
function originOf (req) {
  const raw = req.headers.host
  const socket = req.socket
  const known = socket[kOrigin]
  if (known !== undefined && known.raw === raw) return known
  const origin = parseOrigin(raw, socket.encrypted ? 'https:' : 'http:')
  socket[kOrigin] = origin
  return origin
}

function parseOrigin (raw, protocol) {
  const host = typeof raw === 'string' ? raw.toLowerCase() : ''
  const colon = lastColon(host)
  // A port follows the last colon unless a `]` does (an IPv6 literal).
  const hasPort = colon !== -1 && host.indexOf(']', colon + 1) === -1
  const hostname = hasPort ? host.slice(0, colon) : host
  return {
    raw,
    protocol,
    host: host || null,
    hostname: hostname || null,
    port: hasPort ? host.slice(colon + 1) : null,
    // What comes before the path in `href`: nothing without a Host.
    prefix: host ? protocol + '//' + host : ''
  }
}

function parseQuery (search) {
  const query = Object.create(null)
  if (search.length < 2) return query
  for (const pair of search.slice(1).split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    if (eq === -1) query[pair] = ''
    else query[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return query
}

module.exports = { legacyUrlObject, parseQuery }
