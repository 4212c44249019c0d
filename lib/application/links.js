'use strict'

const { createLegacyApi } = require('./api/legacy-api')
const { createModernApi } = require('./api/modern-api')
const { loadLinks } = require('./load')

/**
 * Load the worker's mods and script once (nothing with --disable-mods).
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {Array<object>} chain links in order
 */
function createLinks (options, shared) {
  if (options.disableMods) return []
  let legacy = null
  let modern = null
  const apis = {
    legacy: () => legacy || (legacy = createLegacyApi(options, shared)),
    modern: () => modern || (modern = createModernApi(options, shared, apis.legacy()))
  }
  return loadLinks(options, apis)
}

module.exports = { createLinks }
