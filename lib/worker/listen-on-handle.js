'use strict'

const { whenListening } = require('../listen')

/**
 * In a worker: listen on a socket the primary bound and sent over IPC, or
 * on a port of a ConnectionFeed (lib/primary/connection-feed.js, --single-threaded).
 * The server adopts the handle the way a cluster worker's server adopts
 * the handles the cluster module hands out (`server.listen(handle)` takes
 * only a TCP handle, and would treat a unix socket's as a descriptor
 * number, which in a cluster worker names another file).
 * @param {import('node:net').Server} server not listening
 * @param {object} handle TCP or Pipe handle received with a message, or a ConnectionPort
 * @returns {Promise<void>}
 */
function listenOnHandle (server, handle) {
  return whenListening(server, () => {
    server._handle = handle
    server._listen2(null, -1, -1)
  })
}

module.exports = { listenOnHandle }
