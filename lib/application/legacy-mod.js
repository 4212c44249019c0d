'use strict'

const path = require('node:path')

/**
 * An SVR.JS 3.x mod (unpacked from its .tar.gz by the primary) as a chain
 * link: `index.js` exports a constructor whose `callback(...)`, given the 22
 * SVR.JS arguments, returns the function that handles the request.
 * @param {{file: string, dir: string, name: string}} entry
 * @param {object} api from createLegacyApi
 * @returns {{name: string, version: string, invoke: Function, proxyRequest?: Function, connect?: Function}}
 */
function createLegacyModLink (entry, api) {
  const Mod = require(path.join(entry.dir, 'index.js'))
  if (typeof Mod !== 'function') throw new TypeError('index.js must export the mod constructor')
  const mod = new Mod()
  if (typeof mod.callback !== 'function') throw new TypeError('the mod has no callback method')
  function invoke (req, res, ctx, next) {
    const handle = api.callMod(mod, req, res, ctx, next)
    if (typeof handle !== 'function') throw new TypeError(entry.name + ': callback() did not return a function')
    handle()
  }
  const link = { name: entry.name, version: entry.version, invoke }
  if (typeof mod.proxyCallback === 'function') {
    // SVR.JS hands absolute-form requests to the callback of mods that can
    // proxy, and CONNECT to their proxyCallback.
    link.proxyRequest = invoke
    link.connect = function connect (req, socket, head, next) {
      const handle = mod.proxyCallback(req, socket, head, api.configJSON, api.serverconsole, next)
      if (typeof handle !== 'function') throw new TypeError(entry.name + ': proxyCallback() did not return a function')
      handle()
    }
  }
  return link
}

module.exports = { createLegacyModLink }
