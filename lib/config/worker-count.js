'use strict'

const os = require('node:os')

/**
 * @param {object} config
 * @returns {number} the worker slots of a cluster
 */
function workerCount (config) {
  return config.workers === 'auto' ? os.availableParallelism() : config.workers
}

module.exports = { workerCount }
