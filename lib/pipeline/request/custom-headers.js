'use strict'

const { fixRawBytes } = require('../../paths/percent')

const PATH_PLACEHOLDER = '{path}'

/**
 * One resolved header set: the headers whose value never changes, and those
 * whose value holds `{path}`, kept as the pieces around each placeholder.
 * @private
 */
class HeaderSet {
  constructor (fixed, withPath) {
    this.fixed = fixed
    this.withPath = withPath
  }
}

/**
 * `customHeaders` merged with one `customHeadersVHost` entry's headers, and
 * `Server` on top, compiled once per worker.
 * @param {object|undefined} base the config's customHeaders
 * @param {object|null|undefined} extra a vhost entry's headers
 * @param {string} serverString value of the Server header
 * @returns {HeaderSet}
 */
function compileHeaderSet (base, extra, serverString) {
  // Header names are case-insensitive: a vhost `x-test` replaces a global `X-Test`.
  const byName = new Map()
  for (const headers of [base, extra]) {
    if (!headers) continue
    for (const name of Object.keys(headers)) byName.set(name.toLowerCase(), [name, headers[name]])
  }
  // SVR.JS adds Server on top of the custom headers, so a custom one cannot hide it.
  byName.set('server', ['Server', serverString])
  const fixed = []
  const withPath = []
  for (const [name, value] of byName.values()) {
    if (value.includes(PATH_PLACEHOLDER)) withPath.push([name, value.split(PATH_PLACEHOLDER)])
    else fixed.push([name, value])
  }
  return new HeaderSet(fixed, withPath)
}

/**
 * Set the headers of a set whose value does not name the path.
 * @param {import('node:http').ServerResponse} res
 * @param {HeaderSet} set
 */
function setFixedHeaders (res, set) {
  for (const [name, value] of set.fixed) res.setHeader(name, value)
}

/**
 * Set the headers of a set whose value holds `{path}`, naming `url`.
 * @param {import('node:http').ServerResponse} res
 * @param {HeaderSet} set
 * @param {string} url request URL (path and query)
 */
function setPathHeaders (res, set, url) {
  for (const [name, parts] of set.withPath) res.setHeader(name, parts.join(url))
}

/**
 * The `{path}` headers of the request's site, set once per request: by the
 * first answer, or where the URL is final (after the rewrite stage), so
 * that they name the URL as it is when the request is answered. Requests
 * of the proxy pipeline carry no custom headers.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {{site: {headers: HeaderSet}, pathHeadersSet: boolean, isProxy: boolean}} ctx
 */
function sendPathHeaders (req, res, ctx) {
  if (ctx.pathHeadersSet) return
  ctx.pathHeadersSet = true
  const set = ctx.site.headers
  if (set.withPath.length === 0 || ctx.isProxy) return
  // The raw target may hold latin-1 bytes; the sanitize stage makes the same fix.
  setPathHeaders(res, set, fixRawBytes(req.url))
}

/**
 * A header set as a fresh plain object, `{path}` replaced by `url`: what
 * SVR.JS's getCustomHeaders() handed to scripts and mods.
 * @param {HeaderSet} set
 * @param {string} url current request URL (path and query)
 * @returns {Object<string, string>}
 */
function headerObject (set, url) {
  const headers = {}
  for (const [name, value] of set.fixed) headers[name] = value
  for (const [name, parts] of set.withPath) headers[name] = parts.join(url)
  return headers
}

module.exports = { compileHeaderSet, setFixedHeaders, setPathHeaders, sendPathHeaders, headerObject }
