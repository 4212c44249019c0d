'use strict'

const { HostIndex } = require('./util/host-index')

const PATH_PLACEHOLDER = '{path}'

// Both the headers stage and the stages that change req.url need the same
// compiled sets; one per configuration object and worker is enough.
const compiled = new WeakMap()

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

function compile (config, serverString) {
  const base = compileHeaderSet(config.customHeaders, null, serverString)
  const vhosts = config.customHeadersVHost.map((entry) => ({
    set: compileHeaderSet(config.customHeaders, entry.headers, serverString)
  }))
  const hasPathHeaders = base.withPath.length !== 0 || vhosts.some((entry) => entry.set.withPath.length !== 0)
  return { base, vhosts, index: new HostIndex(config.customHeadersVHost), hasPathHeaders }
}

/**
 * `customHeaders`, the first matching `customHeadersVHost` entry and
 * `Server`, compiled once per configuration.
 * @param {object} config validated configuration
 * @param {string} serverString value of the Server header
 * @returns {{base: HeaderSet, vhosts: Array<{set: HeaderSet}>, index: HostIndex, hasPathHeaders: boolean}}
 */
function compileCustomHeaders (config, serverString) {
  let entry = compiled.get(config)
  if (entry === undefined || entry.serverString !== serverString) {
    entry = { serverString, headers: compile(config, serverString) }
    compiled.set(config, entry)
  }
  return entry.headers
}

/**
 * The header set that applies to a request.
 * @param {ReturnType<typeof compileCustomHeaders>} headers
 * @param {{hostname: string, localAddress: string}} ctx
 * @returns {HeaderSet}
 */
function selectHeaderSet (headers, ctx) {
  if (headers.vhosts.length === 0) return headers.base
  const number = headers.index.first(ctx.hostname, ctx.localAddress)
  return number === -1 ? headers.base : headers.vhosts[number].set
}

/**
 * Set every header of a set, with `{path}` replaced by `url`.
 * @param {import('node:http').ServerResponse} res
 * @param {HeaderSet} set
 * @param {string} url current request URL (path and query)
 */
function setHeaders (res, set, url) {
  for (const [name, value] of set.fixed) res.setHeader(name, value)
  setPathHeaders(res, set, url)
}

/**
 * Set again only the headers that contain `{path}`: after the request URL
 * changed (dirty-URL rewrite, rewriteMap, postfix), they name the new one.
 * @param {import('node:http').ServerResponse} res
 * @param {HeaderSet} set
 * @param {string} url current request URL (path and query)
 */
function setPathHeaders (res, set, url) {
  for (const [name, parts] of set.withPath) res.setHeader(name, parts.join(url))
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

/**
 * For the stages that change req.url: point the `{path}` headers of the
 * request's set at the new URL; nothing to do for most configurations.
 * @param {import('node:http').ServerResponse} res
 * @param {ReturnType<typeof compileCustomHeaders>} headers
 * @param {{hostname: string, localAddress: string}} ctx
 * @param {string} url the new request URL (path and query)
 */
function refreshPathHeaders (res, headers, ctx, url) {
  if (headers.hasPathHeaders) setPathHeaders(res, selectHeaderSet(headers, ctx), url)
}

module.exports = { compileCustomHeaders, selectHeaderSet, setHeaders, setPathHeaders, refreshPathHeaders, headerObject }
