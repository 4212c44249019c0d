'use strict'

const path = require('node:path')

/**
 * Lines that tell an operator what is wrong with a configuration file: one
 * per problem, each naming the file and the JSON pointer or key.
 * @param {Error & {code?: string, problems?: string[], file?: string}} err
 * @param {string} [file] the configuration file, when err does not carry it
 * @returns {string[]}
 */
function configErrorLines (err, file) {
  if (err.code === 'SVR_ERR_CONFIG_INVALID' && Array.isArray(err.problems)) {
    const name = file || err.file || 'config'
    return err.problems.map((problem) => name + ': ' + problem)
  }
  if (typeof err.code === 'string' && err.code.startsWith('SVR_ERR_')) return [err.message]
  return [(file ? path.basename(file) + ': ' : '') + (err.stack || err.message)]
}

module.exports = { configErrorLines }
