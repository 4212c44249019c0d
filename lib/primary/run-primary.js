'use strict'

const { Supervisor } = require('./supervisor')
const { BlockState } = require('./console/block-state')
const { startConsole } = require('./console')
const { consoleActions } = require('./console/actions')
const { openFleetStore } = require('../store/fleet-store')
const { SharedBlocklist } = require('../store/shared-blocklist')
const { shareTicketKeys } = require('../tls/fleet-ticket-keys')

/**
 * Run the primary: its Supervisor, the signals and the console that drive
 * it, and the console blocks it hands to every worker. A cluster and
 * --single-threaded differ only in the launcher.
 * @param {object} options runtime options with the validated config
 * @param {object} args parsed command line
 * @param {{log: object, logs: import('./logging').LogFiles}} output the primary's logger and its log files
 * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
 * @param {object} launcher a ClusterLauncher (lib/primary/cluster-launcher.js) or an
 *   InProcessLauncher (lib/primary/in-process-launcher.js)
 * @returns {Promise<Supervisor>}
 */
async function runPrimary (options, args, output, prepared, launcher) {
  const { log } = output
  const supervisor = new Supervisor(options, args, output, prepared, launcher)
  process.on('SIGTERM', () => supervisor.stop('SIGTERM'))
  process.on('SIGINT', () => supervisor.stop('SIGINT'))
  process.on('SIGHUP', () => { supervisor.reload() })
  process.on('SIGUSR1', () => supervisor.reopenLogs())
  const blocks = new BlockState(options, (entries) => supervisor.setBlocked(entries), log)
  supervisor.blocked = (await blocks.load()).slice()
  // Connects in the background: svr serves whether or not the store answers.
  const store = await openFleetStore(options, log)
  if (store !== null) {
    supervisor.coordinator.useStore(store)
    blocks.share(new SharedBlocklist(store, (entries) => blocks.adopt(entries), log))
    // Also without TLS: a reload may turn it on.
    shareTicketKeys(store, (keys) => supervisor.useTicketKeys(keys), log)
  }
  await supervisor.start()
  startConsole(consoleActions(supervisor, blocks))
  return supervisor
}

module.exports = { runPrimary }
