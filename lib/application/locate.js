'use strict'

const path = require('node:path')

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

module.exports = { scriptPath }
