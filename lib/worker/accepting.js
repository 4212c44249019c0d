'use strict'

const { listenOnHandle } = require('./listen-on-handle')
const { stateOf } = require('./server-state')

/**
 * Console `close`: stop listening, as SVR.JS does, so new clients are
 * refused outright (the primary has let go of its sockets too); requests
 * in flight finish, idle keep-alive connections are closed.
 * @param {import('node:net').Server} server
 */
function stopAccepting (server) {
  const state = stateOf(server)
  if (state.closed !== null || !server.listening) return
  const ended = new Promise((resolve) => server.close(() => resolve()))
  state.closed = { ended }
}

/**
 * Console `open` in a worker: listen on the socket the primary has bound
 * again (it let go of its own on `close`, so that clients are refused).
 * @param {import('node:net').Server} server
 * @param {object} handle the bound socket's handle, from the primary
 * @returns {Promise<void>}
 */
function resumeAcceptingOn (server, handle) {
  const state = stateOf(server)
  if (server.listening || state.draining) {
    handle.close()
    return server.listening ? Promise.resolve() : Promise.reject(new Error('the server is stopping'))
  }
  const { closed } = state
  state.closed = null
  return listenOnHandle(server, handle).catch((err) => {
    state.closed = closed
    throw err
  })
}

/**
 * @param {import('node:net').Server} server
 * @returns {Promise<void>|null} while closed by the console: settles once
 *   its last connection has ended; null when the server is listening
 */
function closedUntilIdle (server) {
  const state = stateOf(server)
  if (state.closed === null) return null
  // Answers still being written tell their clients not to come back.
  state.draining = true
  return state.closed.ended
}

/**
 * @param {{main: import('node:net').Server, plain: import('node:net').Server|null}} servers
 * @returns {import('node:net').Server[]} every server of a worker (or of the single process)
 */
function serverList (servers) {
  return servers.plain === null ? [servers.main] : [servers.main, servers.plain]
}

module.exports = { stopAccepting, resumeAcceptingOn, closedUntilIdle, serverList }
