'use strict'

/**
 * What svr keeps about one of its listening servers, beside Node's object
 * rather than on it.
 */
class ServerState {
  constructor () {
    // Draining: answers carry "Connection: close", new HTTP/2 sessions are closed.
    this.draining = false
    // The SNI selector of a secure server.
    this.sni = null
    // The open HTTP/2 sessions, which a drain sends GOAWAY.
    this.sessions = null
    // maxRequestBodySize of the pipeline in use.
    this.maxBody = Infinity
    // Where its events go: the pipeline in use, the headers of answers
    // written on the raw socket, what a CONNECT gets (lib/worker/servers.js).
    this.route = null
    // While the console has closed it: when its last connection ended.
    this.closed = null
  }
}

// Keyed by the server object, so a server that is gone takes its state along.
const states = new WeakMap()

/**
 * @param {import('node:net').Server} server
 * @returns {ServerState} the state of the server, made on first use
 */
function stateOf (server) {
  let state = states.get(server)
  if (state === undefined) {
    state = new ServerState()
    states.set(server, state)
  }
  return state
}

module.exports = { stateOf }
