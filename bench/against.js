'use strict'

// What the svr of another checkout (`--against DIR`) runs with: today's
// site config, less what that build does not know.

const fs = require('node:fs/promises')
const path = require('node:path')
const SCHEMA = require('../lib/config/schema.json')

/**
 * The overrides that leave out of today's site config every key the other
 * checkout's schema does not define (an older build refuses them), and
 * only those: a key left out that it knows (the proxy routes, the response
 * cache) would spare it the work today's svr does for it, and make its own
 * µs look lower than the same code's. A build without a schema file gets
 * the site without its proxy routes and response cache.
 * @param {string} dir the other checkout
 * @param {{properties: object}} [schema] today's schema
 * @returns {Promise<object>} key → undefined
 */
async function keysUnknownTo (dir, schema = SCHEMA) {
  let known
  try {
    known = JSON.parse(await fs.readFile(path.join(dir, 'lib', 'config', 'schema.json'), 'utf8')).properties
  } catch {
    return { proxy: undefined, responseCache: undefined }
  }
  const overrides = {}
  for (const key of Object.keys(schema.properties)) if (!(key in known)) overrides[key] = undefined
  return overrides
}

module.exports = { keysUnknownTo }
