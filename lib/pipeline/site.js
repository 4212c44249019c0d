'use strict'

const { HostIndex } = require('../hosts/host-index')
const { compileHeaderSet } = require('./request/custom-headers')
const { parseHostPattern, isScoped, compileLocalIpMatcher, requestHostname, socketAddresses } = require('../hosts/vhost')

// Sites remembered per worker, by host name and local address. The Host
// name is the client's choice, so the memo is bounded (the oldest goes
// first), and a name longer than a DNS name resolves without it.
const MEMO_SIZE = 512
const MAX_MEMO_NAME = 255
const NO_SCOPED = Object.freeze(new Set())

/**
 * What the virtual-host entries of the configuration say about one host
 * name and local address. Shared by every request to them; never changed.
 */
class Site {
  constructor (headers, listing, postfix, errorPages, scopedRewrites, scopedCodes, proxyRoutes, rateLimits, cacheRules) {
    // customHeaders, the first matching customHeadersVHost entry, Server
    this.headers = headers
    // enableDirectoryListing, or the first matching enableDirectoryListingVHost entry
    this.listing = listing
    // the number of the first matching wwwrootPostfixesVHost entry, -1 for none
    this.postfix = postfix
    // the numbers of the errorPages entries that apply, ascending
    this.errorPages = errorPages
    // the numbers of the rewriteMap rules and nonStandardCodes entries with
    // a host or ip that apply; those without either apply everywhere
    this.scopedRewrites = scopedRewrites
    this.scopedCodes = scopedCodes
    // the numbers of the `proxy` routes that apply, in configuration order
    this.proxyRoutes = proxyRoutes
    // the numbers of the `rateLimits` rules that apply, in configuration order
    this.rateLimits = rateLimits
    // the numbers of the `cache` rules that apply, in configuration order
    this.cacheRules = cacheRules
    Object.freeze(this)
  }
}

/**
 * Compile the virtual-host entries of a configuration once per worker:
 * `customHeadersVHost`, `enableDirectoryListingVHost`, `errorPages`,
 * `wwwrootPostfixesVHost`, and the `host`/`ip` of `rewriteMap` rules,
 * `nonStandardCodes` entries and `proxy` routes. As in SVR.JS, the first
 * matching entry in configuration order wins where one entry is picked; a
 * host pattern `*.example.com` matches the apex and its subdomains; `ip` is
 * the local address the client connected to.
 * @param {object} config validated configuration
 * @param {string} serverString value of the Server header
 * @returns {SiteResolver}
 */
function createSiteResolver (config, serverString) {
  return new SiteResolver(config, serverString)
}

class SiteResolver {
  constructor (config, serverString) {
    // Lists of which the first matching entry applies.
    const firsts = [config.customHeadersVHost, config.enableDirectoryListingVHost, config.wwwrootPostfixesVHost]
    const lists = firsts.concat([config.errorPages, config.rewriteMap, config.nonStandardCodes, config.proxy, config.rateLimits, config.cache])
    const base = compileHeaderSet(config.customHeaders, null, serverString)
    this.headerSets = config.customHeadersVHost.map((entry) => compileHeaderSet(config.customHeaders, entry.headers, serverString))
    // Whether any site has `{path}` headers (the path-headers stage is left out otherwise).
    this.pathHeaders = base.withPath.length !== 0 || this.headerSets.some((set) => set.withPath.length !== 0)
    this.base = base
    this.listingDefault = config.enableDirectoryListing
    this.listingRules = config.enableDirectoryListingVHost
    this.indexes = firsts.map((entries) => new HostIndex(entries))
    this.errorPages = new ScopedList(config.errorPages)
    this.rewrites = new ScopedList(config.rewriteMap)
    this.codes = new ScopedList(config.nonStandardCodes)
    this.proxyRoutes = new ScopedList(config.proxy)
    this.rateLimits = new ScopedList(config.rateLimits)
    this.cacheRules = new ScopedList(config.cache)
    this.byHost = lists.some((entries) => entries.some(hasHost))
    this.byAddress = lists.some((entries) => entries.some(hasAddress))
    this.memo = new Map()
    // Without a host or an ip anywhere, every request has the same site.
    this.only = this.byHost || this.byAddress ? null : this.build('', '')
  }

  /**
   * The site of a request. Requests to the same host name and local
   * address get the same object.
   * @param {string} hostname lower-cased, without port and trailing dots (ctx.hostname)
   * @param {string} localAddress the normalized local address (ctx.localAddress)
   * @returns {Site}
   */
  resolve (hostname, localAddress) {
    if (this.only !== null) return this.only
    if (hostname.length > MAX_MEMO_NAME) return this.build(hostname, localAddress)
    const key = !this.byAddress ? hostname : !this.byHost ? localAddress : localAddress + ' ' + hostname
    let site = this.memo.get(key)
    if (site === undefined) {
      site = this.build(hostname, localAddress)
      if (this.memo.size >= MEMO_SIZE) this.memo.delete(this.memo.keys().next().value)
      this.memo.set(key, site)
    }
    return site
  }

  /**
   * The site of a request that has no context (one answered before the
   * pipeline made one), from its Host header and socket.
   * @param {import('node:http').IncomingMessage} req
   * @returns {Site}
   */
  forRequest (req) {
    return this.resolve(requestHostname(req), socketAddresses(req.socket).local)
  }

  build (hostname, localAddress) {
    const [headers, listing, postfix] = this.indexes.map((index) => index.first(hostname, localAddress))
    return new Site(
      headers === -1 ? this.base : this.headerSets[headers],
      listing === -1 ? this.listingDefault : this.listingRules[listing].enabled,
      postfix,
      this.errorPages.all(hostname, localAddress),
      this.rewrites.scoped(hostname, localAddress),
      this.codes.scoped(hostname, localAddress),
      this.proxyRoutes.all(hostname, localAddress),
      this.rateLimits.all(hostname, localAddress),
      this.cacheRules.all(hostname, localAddress))
  }
}

/**
 * A list whose every matching entry applies (not only the first): the
 * entries without host and ip apply to every site and are kept apart, so
 * that building a site costs what its own entries cost.
 * @private
 */
class ScopedList {
  constructor (entries) {
    this.everywhere = []
    const scoped = entries.map((entry, number) => {
      if (isScoped(entry)) return entry
      this.everywhere.push(number)
      return null
    })
    this.index = this.everywhere.length === entries.length ? null : new HostIndex(scoped)
  }

  // The scoped entries that apply, as a set.
  scoped (hostname, localAddress) {
    if (this.index === null) return NO_SCOPED
    const found = this.index.all(hostname, localAddress)
    return found.length === 0 ? NO_SCOPED : new Set(found)
  }

  // Every entry that applies, ascending.
  all (hostname, localAddress) {
    if (this.index === null) return this.everywhere
    const found = this.index.all(hostname, localAddress)
    if (found.length === 0) return this.everywhere
    return this.everywhere.concat(found).sort((a, b) => a - b)
  }
}

function hasHost (entry) {
  return parseHostPattern(entry.host) !== null
}

function hasAddress (entry) {
  return compileLocalIpMatcher(entry.ip) !== null
}

module.exports = { createSiteResolver, Site }
