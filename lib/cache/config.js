'use strict'

const path = require('node:path')

/**
 * @param {object} data the configuration, as validated or as loaded
 * @returns {boolean} whether anything is cached: a proxy route with
 *   `cache`, or a `cache` rule for the application's answers
 */
function caches (data) {
  return (Array.isArray(data.cache) && data.cache.length !== 0) ||
    (Array.isArray(data.proxy) && data.proxy.some((route) => route !== null && typeof route === 'object' && route.cache != null))
}

// The response cache's keys to the configuration loader (lib/config/load.js).
const cacheConfig = {
  problems (data) {
    if (!caches(data)) return []
    const directory = data.responseCache && data.responseCache.directory
    if (directory == null && data.stateDirectory == null) {
      return ['/responseCache/directory: cached answers ("cache" rules, or a proxy route\'s "cache") are kept on disk: set it, or "stateDirectory"']
    }
    return []
  },
  resolve (config, configDir) {
    const cache = config.responseCache
    if (cache.directory !== null) cache.directory = path.resolve(configDir, cache.directory)
    else if (config.stateDirectory !== null) cache.directory = path.resolve(configDir, config.stateDirectory, 'cache')
  }
}

module.exports = { cacheConfig, caches }
