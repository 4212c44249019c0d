'use strict'

const fs = require('node:fs/promises')
const { svrError } = require('../errors')
const { checkSyntax, describeLoadError } = require('./compile')
const { scriptPath } = require('./locate')

/**
 * Parse serverSideScript.js without running it, so that a broken script
 * stops the start (or a reload, or --check-config) with its file and line
 * before any worker is forked.
 * @param {object} options runtime options
 * @returns {Promise<void>}
 * @throws {SvrError} SVR_ERR_SCRIPT_LOAD
 */
async function checkScript (options) {
  if (options.disableMods) return
  const file = scriptPath(options)
  let real
  let source
  try {
    real = await fs.realpath(file)
    source = await fs.readFile(real, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return
    throw svrError('SVR_ERR_SCRIPT_LOAD', [file, err.message], { cause: err })
  }
  try {
    checkSyntax(source, real, options.config.serverSideScriptFormat)
  } catch (err) {
    throw svrError('SVR_ERR_SCRIPT_LOAD', [file, describeLoadError(err, real)], { cause: err })
  }
}

module.exports = { checkScript }
