'use strict'

const path = require('node:path')

/**
 * @param {object} data the configuration as validated
 * @returns {boolean} whether a proxy route caches
 */
function caches (data) {
  return Array.isArray(data.proxy) && data.proxy.some((route) => route !== null && typeof route === 'object' && route.cache != null)
}

// The response cache's keys to the configuration loader (lib/config/load.js).
const cacheConfig = {
  problems (data) {
    if (!caches(data)) return []
    const directory = data.responseCache && data.responseCache.directory
    if (directory == null && data.stateDirectory == null) {
      return ['/responseCache/directory: a proxy route has "cache", whose answers are kept on disk: set it, or "stateDirectory"']
    }
    return []
  },
  resolve (config, configDir) {
    const cache = config.responseCache
    if (cache.directory !== null) cache.directory = path.resolve(configDir, cache.directory)
    else if (config.stateDirectory !== null) cache.directory = path.resolve(configDir, config.stateDirectory, 'cache')
  }
}

module.exports = { cacheConfig }
