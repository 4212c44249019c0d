'use strict'

const { stopAccepting, resumeAccepting, serverList } = require('./accepting')

const CLOSED = 'closed: new connections are refused until "open"; requests in flight finish'
const OPENED = 'open: accepting connections'

/**
 * Console actions of the cluster primary: each one is applied to every
 * worker at once over IPC.
 * @param {object} supervisor the primary's Supervisor
 * @param {import('./block-state').BlockState} blocks
 */
function primaryActions (supervisor, blocks) {
  return {
    mods: () => supervisor.mods || [],
    block: (args) => blocks.block(args),
    unblock: (args) => blocks.unblock(args),
    close () {
      supervisor.setAccepting(false)
      return CLOSED
    },
    open () {
      const failure = supervisor.setAccepting(true)
      return failure === null ? OPENED : 'still closed: ' + failure
    },
    restart () {
      supervisor.reload()
      return 'restart: replacing the workers one at a time'
    },
    stop: () => supervisor.stop('console "stop"')
  }
}

/**
 * Console actions of --single-threaded mode.
 * @param {{servers: object, blocks: import('./block-state').BlockState, reload: () => void, stop: () => void}} single
 */
function singleActions (single) {
  return {
    mods: () => single.servers.mods,
    block: (args) => single.blocks.block(args),
    unblock: (args) => single.blocks.unblock(args),
    close () {
      for (const server of serverList(single.servers)) stopAccepting(server)
      return CLOSED
    },
    open () {
      const opened = serverList(single.servers).map(resumeAccepting)
      return Promise.all(opened).then(() => OPENED, (err) => 'still closed: ' + err.message)
    },
    restart () {
      single.reload()
      return 'restart: reloading the configuration, mods and script'
    },
    stop: () => single.stop()
  }
}

module.exports = { primaryActions, singleActions }
