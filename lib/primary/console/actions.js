'use strict'

const CLOSED = 'closed: new connections are refused until "open"; requests in flight finish'
const OPENED = 'open: accepting connections'
// A worker answers a mod command within its own wait (lib/application/commands.js); past this it is stuck.
const MOD_COMMAND_TIMEOUT_MS = 10000

/**
 * Console actions of the primary, a cluster's or --single-threaded's: each
 * one is applied to every worker at once over IPC.
 * @param {import('../supervisor').Supervisor} supervisor
 * @param {import('./block-state').BlockState} blocks
 */
function consoleActions (supervisor, blocks) {
  return {
    mods: () => supervisor.code.mods,
    modCommands: () => supervisor.code.commands,
    runModCommand: (name, args) => runModCommand(supervisor, name, args),
    block: (args) => blocks.block(args),
    unblock: (args) => blocks.unblock(args),
    purge: (args) => Promise.all(args.map((target) => supervisor.coordinator.cache.purge(target))),
    close () {
      supervisor.setAccepting(false)
      return CLOSED
    },
    open () {
      return supervisor.setAccepting(true).then((failure) => failure === null ? OPENED : 'still closed: ' + failure)
    },
    restart () {
      supervisor.reload()
      return 'restart: replacing the workers one at a time'
    },
    stop: () => supervisor.stop('console "stop"')
  }
}

/**
 * A console command that mods export, run in every worker that serves (a
 * mod's state, such as a cache, lives in each of them).
 * @returns {Promise<string[]>} what each worker's run said, each line named
 *   by its worker when there are several
 */
async function runModCommand (supervisor, name, args) {
  const answers = await supervisor.askServing('mod-command', { name, args }, MOD_COMMAND_TIMEOUT_MS)
  const named = answers.length > 1
  return answers.flatMap(({ label, value, error }) => {
    const lines = error === undefined ? value.map(String) : [name + ' failed: ' + error.message]
    return named ? lines.map((line) => label + ': ' + line) : lines
  })
}

module.exports = { consoleActions }
