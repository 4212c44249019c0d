'use strict'

const { parseUpstream } = require('./upstream-url')
const { segmentPrefix } = require('../paths/segment-prefix')
const { createPolicy } = require('./balance')
const { Member, workerShare } = require('./member')
const { RouteQueue } = require('./queue')
const { hashString } = require('./hash')
const { compileStickyCookie, stickyValue } = require('./sticky-cookie')
const { compileCacheSettings } = require('../cache/policy')

/**
 * A route of `proxy`, compiled once per pipeline.
 * @typedef {object} Route
 * @property {number} number its index in `proxy`
 * @property {string} path the configured prefix
 * @property {import('./member').Member[]} members its upstreams, in configuration order
 * @property {Array<import('./member').Member[]>} tiers the primaries, then the backups
 */

/**
 * @param {object} config the loaded configuration
 * @param {import('./upstreams').ProxyUpstreams} registry the worker's upstreams
 * @param {Array<string[]|null>} proxyCa per route, the PEM texts of its `tls.ca` (lib/proxy/ca-files.js)
 * @param {number} workers how many workers share each `maxConnections`
 * @returns {Route[]}
 */
function compileRoutes (config, registry, proxyCa, workers) {
  return config.proxy.map((entry, number) => {
    const settings = { connections: entry.connections, connectTimeout: entry.connectTimeout, tls: routeTls(entry, proxyCa[number]), http2: entry.http2 }
    const members = entry.upstreams.map((upstreamEntry) => {
      const upstream = registry.get(parseUpstream(upstreamEntry.url).address, settings)
      const max = upstreamEntry.maxConnections ?? entry.maxConnections
      return new Member(upstream, upstreamEntry, workerShare(max, workers), entry.slowStart)
    })
    const cookie = entry.policy === 'cookie' ? compileStickyCookie(entry.cookie) : null
    const route = {
      number,
      path: entry.path,
      // "/api" matches /api and /api/…; "/api/" and "/" match what starts with them.
      matchesPath: segmentPrefix(entry.path),
      stripLength: entry.stripPrefix ? entry.path.replace(/\/+$/, '').length : 0,
      members,
      // Primaries, then backups (used while no primary is up).
      tiers: [members.filter((member) => !member.backup), members.filter((member) => member.backup)].filter((tier) => tier.length !== 0),
      pick: createPolicy(entry.policy),
      keyOf: policyKey(entry.policy, cookie),
      cookie,
      queue: null,
      preserveHost: entry.preserveHost,
      requestHeaders: lowerCased(entry.requestHeaders),
      responseHeaders: lowerCased(entry.responseHeaders),
      firstByteTimeout: entry.firstByteTimeout,
      idleTimeout: entry.idleTimeout,
      maxBodySize: entry.maxBodySize,
      retries: entry.retries,
      health: { maxFails: entry.maxFails, failWindow: entry.failWindow, failTimeout: entry.failTimeout },
      // The Via name: the received-by pseudonym, never the host name.
      pseudonym: 'svr',
      healthCheck: entry.healthCheck,
      // The response cache's settings (lib/cache/policy.js), null: not cached.
      cache: entry.cache === null ? null : compileCacheSettings(entry.cache)
    }
    if (members.some((member) => member.limit !== Infinity)) route.queue = new RouteQueue(route, entry.queueSize, entry.queueTimeout, registry)
    return route
  })
}

/**
 * What a route's policy keys on, worked out once per request.
 * @param {string} policy
 * @param {import('./sticky-cookie').StickyCookie|null} cookie
 * @returns {(ctx: object) => number|string|null}
 */
function policyKey (policy, cookie) {
  if (policy === 'client-hash') return (ctx) => hashString(ctx.clientAddress)
  if (policy === 'cookie') return (ctx) => stickyValue(ctx.req.headers.cookie, cookie)
  return noKey
}

function noKey () {
  return null
}

/**
 * @param {object} entry a route of the configuration
 * @param {string[]|null} ca the texts of its CA files
 * @returns {import('./upstream-tls').UpstreamTls}
 */
function routeTls (entry, ca) {
  return { ca, servername: entry.tls.servername, rejectUnauthorized: entry.tls.rejectUnauthorized }
}

function lowerCased (headers) {
  return Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])
}

/**
 * @param {Route[]} routes
 * @param {object} ctx the request context: its site lists the routes for its host and address
 * @returns {Route|null} the first route that matches
 */
function matchRoute (routes, ctx) {
  for (const number of ctx.site.proxyRoutes) {
    const route = routes[number]
    if (route.matchesPath(ctx.pathname)) return route
  }
  return null
}

/**
 * The target sent upstream: the clean path, without the prefix when the
 * route strips it, and the query.
 * @param {Route} route
 * @param {object} ctx
 * @returns {string}
 */
function upstreamTarget (route, ctx) {
  if (route.stripLength === 0) return ctx.pathname + ctx.search
  const rest = ctx.pathname.slice(route.stripLength)
  return (rest.charCodeAt(0) === 47 /* / */ ? rest : '/' + rest) + ctx.search
}

module.exports = { compileRoutes, routeTls, matchRoute, upstreamTarget }
