'use strict'

// The site resolver picks, once per request, what every virtual-host entry
// says about the request's host name and local address. It must agree with
// the plain loop over each list: the first fitting entry where one entry is
// picked, every fitting entry where all apply.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { compileHostMatcher, compileLocalIpMatcher } = require('../../lib/hosts/vhost')
const { headerObject } = require('../../lib/pipeline/request/custom-headers')
const { sitesFor, siteConfig } = require('../helpers/site')
const { entry: scope, hostname, local, entryFits: fits } = require('../helpers/vhost-arbitraries')

const RUNS = 1500

const list = (extra) => fc.array(fc.tuple(scope, extra).map(([where, fields]) => ({ ...where, ...fields })), { maxLength: 8 })
const config = fc.record({
  customHeaders: fc.constantFrom({}, { 'X-A': 'a {path}' }),
  customHeadersVHost: list(fc.nat(9).map((n) => ({ headers: { 'X-Entry': String(n), 'X-P': n + ' {path}' } }))),
  enableDirectoryListing: fc.boolean(),
  enableDirectoryListingVHost: list(fc.boolean().map((enabled) => ({ enabled }))),
  wwwrootPostfixesVHost: list(fc.constantFrom({ postfix: 'p' }, { postfix: 'q' })),
  errorPages: list(fc.constantFrom(403, 404, 500).map((scode) => ({ scode, path: 'e' + scode + '.html' }))),
  rewriteMap: list(fc.constant({ definingRegex: '/^\\/x/' })),
  nonStandardCodes: list(fc.constantFrom({ scode: 403, url: '/x' }, { scode: 401, url: '/y' }))
})

// What the loop over every list gives, in the terms of a Site.
function naiveSite (cfg, host, localAddress) {
  const first = (entries) => entries.findIndex((entry) => fits(entry, host, localAddress))
  const all = (entries) => entries.flatMap((entry, number) => fits(entry, host, localAddress) ? [number] : [])
  const headersEntry = first(cfg.customHeadersVHost)
  const listingEntry = first(cfg.enableDirectoryListingVHost)
  return {
    headers: { ...cfg.customHeaders, ...(headersEntry === -1 ? {} : cfg.customHeadersVHost[headersEntry].headers) },
    listing: listingEntry === -1 ? cfg.enableDirectoryListing : cfg.enableDirectoryListingVHost[listingEntry].enabled,
    postfix: first(cfg.wwwrootPostfixesVHost),
    errorPages: all(cfg.errorPages),
    rewrites: all(cfg.rewriteMap),
    codes: all(cfg.nonStandardCodes)
  }
}

// The entries of a list that apply to a site: those without host and ip
// apply everywhere, the others when the site lists them.
function applying (entries, scopedSet) {
  return entries.flatMap((entry, number) => {
    const scoped = compileHostMatcher(entry.host) !== null || compileLocalIpMatcher(entry.ip) !== null
    return !scoped || scopedSet.has(number) ? [number] : []
  })
}

function assertSameSite (cfg, site, host, localAddress) {
  const expected = naiveSite(cfg, host, localAddress)
  const where = `${host} ${localAddress} in ${JSON.stringify(cfg)}`
  const headers = headerObject(site.headers, '/u')
  delete headers.Server
  const wanted = {}
  for (const [key, value] of Object.entries(expected.headers)) wanted[key] = value.replace('{path}', '/u')
  assert.deepEqual(headers, wanted, where)
  assert.equal(site.listing, expected.listing, where)
  assert.equal(site.postfix, expected.postfix, where)
  assert.deepEqual([...site.errorPages], expected.errorPages, where)
  assert.deepEqual(applying(cfg.rewriteMap, site.scopedRewrites), expected.rewrites, where)
  assert.deepEqual(applying(cfg.nonStandardCodes, site.scopedCodes), expected.codes, where)
}

describe('site resolver', () => {
  it('should pick what the loop over every list picks, for any entries and request', () => {
    const requests = fc.array(fc.tuple(hostname, local), { minLength: 1, maxLength: 8 })
    fc.assert(fc.property(config, requests, (cfg, pairs) => {
      const sites = sitesFor(cfg)
      // Twice: the second time from the memo.
      for (const [host, localAddress] of pairs.concat(pairs)) {
        assertSameSite(cfg, sites.resolve(host, localAddress), host, localAddress)
      }
    }), { numRuns: RUNS })
  })

  it('should give requests to one host and address one site, and stay right past its memo', () => {
    const cfg = {
      customHeadersVHost: [{ host: '*.example.com', headers: { 'X-Wild': '1' } }, { ip: '::1', headers: { 'X-Ip': '1' } }],
      rewriteMap: [{ definingRegex: '/^\\/x/', host: 'h7.example.com' }]
    }
    const full = siteConfig(cfg)
    const sites = sitesFor(cfg)
    assert.equal(sites.resolve('a.example.com', '127.0.0.1'), sites.resolve('a.example.com', '127.0.0.1'))
    assert.notEqual(sites.resolve('a.example.com', '127.0.0.1'), sites.resolve('a.example.com', '::1'))
    for (let round = 0; round < 2; round++) {
      for (let n = 0; n < 1500; n++) {
        const host = 'h' + n + '.example.com'
        assertSameSite(full, sites.resolve(host, '::1'), host, '::1')
      }
    }
    // Host names are the client's choice: the memo keeps the latest 512.
    assert.equal(sites.memo.size, 512)
    const long = 'a'.repeat(300) + '.example.com'
    assert.equal(headerObject(sites.resolve(long, '127.0.0.1').headers, '/')['X-Wild'], '1')
  })

  it('should hand every request the same site when no entry names a host or an address', () => {
    const sites = sitesFor({ customHeadersVHost: [{ headers: { 'X-All': '1' } }], errorPages: [{ scode: 404, path: 'x' }] })
    const site = sites.resolve('a.test', '127.0.0.1')
    assert.equal(sites.resolve('b.test', '::1'), site)
    assert.equal(headerObject(site.headers, '/')['X-All'], '1')
    assert.deepEqual([...site.errorPages], [0])
  })
})
