'use strict'

const { loadFreshModule } = require('./fresh-module')

/**
 * An SVR.JS 4.x `.js` mod: `module.exports = (req, res, logFacilities,
 * config, next) => {}` with `module.exports.modInfo = {name, version}`.
 * @param {{file: string, name: string}} entry
 * @param {object} api from createModernApi
 * @returns {{name: string, version: string, invoke: Function, proxyRequest?: Function, connect?: Function}}
 */
function createModernModLink (entry, api) {
  // A new module instance: a reload's worker may run in the same process.
  const mod = loadFreshModule(entry.file)
  if (typeof mod !== 'function') throw new TypeError('module.exports must be a function (req, res, logFacilities, config, next)')
  function invoke (req, res, ctx, next) {
    api.decorate(req, res, ctx)
    return mod(req, res, api.logFacilities, api.config, next)
  }
  const link = { ...modernModInfo(mod), invoke }
  // 4.x: `proxy` handles CONNECT; such mods, and those marked `proxySafe`,
  // also see absolute-form requests.
  if (typeof mod.proxy === 'function' || mod.proxySafe === true) link.proxyRequest = invoke
  if (typeof mod.proxy === 'function') {
    link.connect = function connect (req, socket, head, next) {
      return mod.proxy(req, socket, head, api.logFacilities, api.config, next)
    }
  }
  return link
}

/**
 * @param {Function} mod the mod's exports
 * @returns {{name: string, version: string}} from its `modInfo`
 */
function modernModInfo (mod) {
  const info = mod.modInfo
  return {
    name: info && typeof info.name === 'string' ? info.name : 'unnamed mod',
    version: info && info.version !== undefined ? String(info.version) : 'unknown'
  }
}

module.exports = { createModernModLink }
