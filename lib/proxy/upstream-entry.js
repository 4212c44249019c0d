'use strict'

const schema = require('../config/schema.json')

// The defaults of an upstream written as an object, from the schema (its
// only source); a URL written alone gets them too.
const ENTRY_DEFAULTS = defaultsOf(schema.properties.proxy.items.properties.upstreams.items.properties)

function defaultsOf (properties) {
  const defaults = {}
  for (const [key, property] of Object.entries(properties)) {
    if (property.default !== undefined) defaults[key] = property.default
  }
  return defaults
}

/**
 * An entry of a route's `upstreams` as every reader of the loaded
 * configuration sees it.
 * @typedef {object} UpstreamEntry
 * @property {string} url
 * @property {number} weight
 * @property {boolean} backup
 * @property {number|null} maxConnections null: the route's
 */

/**
 * @param {string|object} value a URL, or an object the schema filled in
 * @returns {UpstreamEntry}
 */
function upstreamEntry (value) {
  return typeof value === 'string' ? { url: value, ...ENTRY_DEFAULTS } : { ...ENTRY_DEFAULTS, ...value }
}

/**
 * @param {unknown} value an entry as written, before the loader resolved it
 * @returns {string|undefined} its URL
 */
function upstreamUrl (value) {
  if (typeof value === 'string') return value
  return value !== null && typeof value === 'object' && typeof value.url === 'string' ? value.url : undefined
}

module.exports = { upstreamEntry, upstreamUrl }
