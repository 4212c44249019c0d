'use strict'

const { schema } = require('../../lib/config/load')
const { createSiteResolver } = require('../../lib/pipeline/site')

// The configuration keys the site resolver reads.
const SITE_KEYS = ['customHeaders', 'customHeadersVHost', 'enableDirectoryListing', 'enableDirectoryListingVHost',
  'wwwrootPostfixesVHost', 'errorPages', 'rewriteMap', 'nonStandardCodes', 'proxy', 'rateLimits', 'cache']

/**
 * @param {object} config some of the site keys; the others get the schema's defaults
 * @returns {object} a configuration with every key the site resolver reads
 */
function siteConfig (config = {}) {
  const full = {}
  for (const key of SITE_KEYS) full[key] = structuredClone(schema.properties[key].default)
  return { ...full, ...config }
}

/**
 * The site resolver of a worker with this configuration.
 * @param {object} config some of the site keys
 * @param {string} [serverString]
 */
function sitesFor (config, serverString = 'svr') {
  return createSiteResolver(siteConfig(config), serverString)
}

/**
 * The site a request to `hostname` on `localAddress` gets.
 * @param {object} config some of the site keys
 * @param {string} hostname
 * @param {string} localAddress
 */
function siteFor (config, hostname, localAddress) {
  return sitesFor(config).resolve(hostname, localAddress)
}

module.exports = { siteConfig, sitesFor, siteFor, SITE_KEYS }
