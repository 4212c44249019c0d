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
  const protocol = req.socket.encrypted ? 'https:' : 'http:'
  const host = typeof req.headers.host === 'string' ? req.headers.host.toLowerCase() : ''
  const { hostname, port } = splitHost(host)
  const path = ctx.pathname + ctx.search
  return {
    protocol,
    slashes: true,
    auth: null,
    host: host || null,
    port,
    hostname: hostname || null,
    hash: null,
    search: ctx.search || null,
    query: parseQuery(ctx.search),
    pathname: ctx.pathname,
    path,
    href: host ? protocol + '//' + host + path : path
  }
}

function splitHost (host) {
  const colon = lastColon(host)
  const bracket = colon === -1 ? -1 : host.indexOf(']')
  if (colon > bracket && colon !== -1) return { hostname: host.slice(0, colon), port: host.slice(colon + 1) }
  return { hostname: host, port: null }
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
