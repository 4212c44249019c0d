'use strict'

const CLOSED = 'closed: new connections are refused until "open"; requests in flight finish'
const OPENED = 'open: accepting connections'

/**
 * Console actions of the primary, a cluster's or --single-threaded's: each
 * one is applied to every worker at once over IPC.
 * @param {import('../supervisor').Supervisor} supervisor
 * @param {import('./block-state').BlockState} blocks
 */
function consoleActions (supervisor, blocks) {
  return {
    mods: () => supervisor.mods || [],
    block: (args) => blocks.block(args),
    unblock: (args) => blocks.unblock(args),
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

module.exports = { consoleActions }
