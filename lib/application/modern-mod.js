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
  const mod = loadModernMod(entry.file)
  function invoke (req, res, ctx, next) {
    api.decorate(req, res, ctx)
    return mod(req, res, api.logFacilities, api.config, next)
  }
  const link = { ...modernModInfo(mod), invoke, commands: modCommands(mod) }
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
 * Load a 4.x mod's file as the workers and the primary's declaration
 * probe (lib/application/mods/probe.js) both do: a new module instance each time, since
 * a reload's worker may run in the same process.
 * @param {string} file
 * @returns {Function} the mod's exports
 * @throws {Error} what loading threw, or a TypeError when it exports no handler
 */
function loadModernMod (file) {
  const mod = loadFreshModule(file)
  if (typeof mod !== 'function') throw new TypeError('module.exports must be a function (req, res, logFacilities, config, next)')
  return mod
}

/**
 * The console commands a 4.x mod exports: `commands = {name: (args, log,
 * passCommand) => …}`.
 * @param {Function} mod the mod's exports
 * @returns {Object<string, Function>} name -> command, without inherited names
 */
function modCommands (mod) {
  const commands = Object.create(null)
  const exported = mod.commands
  if (exported === null || typeof exported !== 'object') return commands
  for (const name of Object.keys(exported)) {
    if (typeof exported[name] === 'function') commands[name] = exported[name]
  }
  return commands
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

module.exports = { createModernModLink, loadModernMod, modernModInfo, modCommands }
