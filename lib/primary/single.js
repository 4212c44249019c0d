'use strict'

const { runPrimary } = require('./run-primary')
const { InProcessLauncher } = require('./in-process-launcher')
const { containRequestError } = require('../application/request-scope')

/**
 * --single-threaded: the primary's logic with one worker in its own
 * process (lib/primary/in-process-launcher.js). Reloads replace that worker as they
 * replace a cluster's; but an uncaught exception outside a request stops
 * the one process, so this mode is for debugging and for environments that
 * supervise processes themselves.
 * @param {object} options runtime options
 * @param {object} args parsed command line
 * @param {{log: object, logs: import('./logging').LogFiles}} output the process's logger and its log files
 * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
 * @returns {Promise<import('./supervisor').Supervisor>}
 */
function runSingle (options, args, output, prepared) {
  const { log } = output
  log.warn('single-threaded mode: a crash stops the server (use a cluster for production)')
  process.on('uncaughtException', (err) => crashUnlessContained(err, log))
  process.on('unhandledRejection', (reason) => crashUnlessContained(reason, log))
  return runPrimary(options, args, output, prepared, new InProcessLauncher())
}

function crashUnlessContained (err, log) {
  if (containRequestError(err, log)) return
  log.error('uncaught exception, stopping:', err)
  process.exit(1)
}

module.exports = { runSingle }
