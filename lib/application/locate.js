'use strict'

const path = require('node:path')
const { tempDir } = require('../config/server-root')

/**
 * Where serverSideScript.js is looked up: in the webroot with
 * `useWebRootServerSideScript`, else beside the configuration file (beside
 * svr.js in a checkout, /etc/svr when installed as a service).
 * @param {object} options runtime options
 * @returns {string}
 */
function scriptPath (options) {
  const dir = options.config.useWebRootServerSideScript ? options.config.wwwroot : path.dirname(options.configFile)
  return path.join(dir, 'serverSideScript.js')
}

/**
 * The directory of mods: beside the configuration file, as in SVR.JS.
 * @param {object} options runtime options
 * @returns {string}
 */
function modsDir (options) {
  return path.join(path.dirname(options.configFile), 'mods')
}

/**
 * Where application code is found and keeps its files, for the paths never
 * served.
 * @param {object} options runtime options
 * @returns {{script: string, mods: string, temp: string}}
 */
function codeLocations (options) {
  return { script: scriptPath(options), mods: modsDir(options), temp: tempDir(options) }
}

module.exports = { scriptPath, modsDir, codeLocations }
