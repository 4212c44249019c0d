'use strict'

const fs = require('node:fs/promises')
const { invalidConfig } = require('../errors')

/**
 * Refuse a configuration whose webroot cannot be served: svr enters it as
 * the working directory of the processes that run application code, and
 * SVR.JS refused to start without it too. Checked when starting, reloading
 * and with --check-config, not by every reader of the file (svrpasswd).
 * @param {string} file the configuration file, for the message
 * @param {{wwwroot: string}} config loaded
 * @returns {Promise<void>}
 * @throws {SvrError} SVR_ERR_CONFIG_INVALID with the problem at /wwwroot
 */
async function checkWebroot (file, config) {
  let stat
  try {
    stat = await fs.stat(config.wwwroot)
  } catch (err) {
    const reason = err.code === 'ENOENT' ? 'does not exist' : 'cannot be read (' + err.code + ')'
    throw invalidConfig(file, ['/wwwroot: the webroot ' + config.wwwroot + ' ' + reason])
  }
  if (!stat.isDirectory()) throw invalidConfig(file, ['/wwwroot: the webroot ' + config.wwwroot + ' is not a directory'])
}

module.exports = { checkWebroot }
