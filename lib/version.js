'use strict'

const os = require('node:os')
const { version } = require('../package.json')

const PRODUCT = 'svr'

/** @returns {string} e.g. "svr/0.1.0 (Linux; Node.js/v20.20.2)" */
function fullServerString () {
  return PRODUCT + '/' + version + ' (' + os.type() + '; Node.js/' + process.version + ')'
}

/**
 * The Server header and page signature: the product name alone unless the
 * configuration asks to expose the version (SVR.JS exposed it by default).
 * @param {{exposeServerVersion: boolean}} config
 * @returns {string}
 */
function serverString (config) {
  return config.exposeServerVersion ? fullServerString() : PRODUCT
}

module.exports = { PRODUCT, version, fullServerString, serverString }
