'use strict'

const net = require('node:net')
const { wildcardPattern, hostPart } = require('../../hosts/server-names')

const TRAILING_DOTS = /\.+$/

/**
 * HTTP→HTTPS, right after sanitizing as in SVR.JS: with `secure`, a request that
 * arrived on the plain-HTTP server gets a 301 to the same URL over HTTPS.
 * The target host is never taken blindly from the client (SVR.JS's was,
 * so any client could choose where a redirect went): the Host
 * name is kept only when it is one of the server's own names (`domain`,
 * `www.` + domain, the `sni` names and wildcards, or the IP address the
 * client connected to); any other Host goes to `domain`, or gets 400 when
 * no `domain` is set. The port is `spubport`, left out when 443.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean) | null} null unless the plain server redirects
 */
function createHttpsRedirectStage (options, shared) {
  const { config } = options
  if (!config.secure || config.disableNonEncryptedServer || config.disableToHTTPSRedirect) return null
  const { respond } = shared
  const isOwnName = compileOwnNames(config)
  const fallback = config.domain.toLowerCase().replace(TRAILING_DOTS, '')
  const port = config.spubport === 443 ? '' : ':' + config.spubport

  return function redirectToHttps (req, res, ctx) {
    if (ctx.secure) return false
    // The plain server is no proxy, as in SVR.JS.
    if (ctx.isProxy) {
      respond.sendError(ctx, 501)
      return true
    }
    const host = ctx.hostname !== '' && (isOwnName(ctx.hostname) || ctx.hostname === ctx.localAddress)
      ? ctx.hostname
      : fallback
    if (host === '') {
      respond.sendError(ctx, 400)
      return true
    }
    respond.redirect(ctx, 'https://' + (net.isIPv6(host) ? '[' + host + ']' : host) + port + req.url, 301)
    return true
  }
}

/**
 * @param {object} config
 * @returns {(hostname: string) => boolean} whether a Host name (lower-case,
 *   without port) is one this server answers to by configuration
 */
function compileOwnNames (config) {
  const exact = new Set()
  const patterns = []
  const domain = config.domain.toLowerCase().replace(TRAILING_DOTS, '')
  if (domain !== '') {
    exact.add(domain)
    if (!domain.startsWith('www.')) exact.add('www.' + domain)
  }
  for (const key of Object.keys(config.sni)) {
    const name = hostPart(key.toLowerCase())
    if (name.includes('*')) patterns.push(wildcardPattern(name))
    else exact.add(name)
  }
  return function isOwnName (hostname) {
    if (exact.has(hostname)) return true
    for (const pattern of patterns) {
      if (pattern.test(hostname)) return true
    }
    return false
  }
}

module.exports = { createHttpsRedirectStage }
