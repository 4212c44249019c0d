'use strict'

/**
 * What a worker's server listens on when the primary accepts its
 * connections and hands them over (lib/primary/connection-dispatch.js): an
 * object shaped like a listening handle, adopted the way listenOnHandle()
 * adopts a bound socket. Node sets `onconnection` on it, and each connection
 * handed over goes through Node's own accept path in the server (its count,
 * maxConnections, the 'connection' event). Listening and closing tell the
 * primary, which hands connections only to a port that is open.
 */
class HandedPort {
  /**
   * @param {string} role the server's role, 'main' or 'plain'
   * @param {import('../ipc').Peer} coordinator the primary
   * @param {object|null} address the socket's, for server.address()
   */
  constructor (role, coordinator, address) {
    this.role = role
    this.coordinator = coordinator
    this.onconnection = null
    this.open = false
    if (address !== null && typeof address === 'object') {
      this.getsockname = (out) => {
        Object.assign(out, address)
        return 0
      }
    }
  }

  listen () {
    this.open = true
    this.coordinator.notify('port-open', { role: this.role })
    return 0
  }

  close (callback) {
    if (this.open) {
      this.open = false
      this.coordinator.notify('port-closed', { role: this.role })
    }
    if (typeof callback === 'function') process.nextTick(callback)
  }

  /**
   * @param {object} client the TCP or Pipe handle of a connection the primary accepted
   * @returns {boolean} whether the server took it (false once it stopped listening)
   */
  take (client) {
    if (!this.open || typeof this.onconnection !== 'function') return false
    this.onconnection(0, client)
    return true
  }

  // The IPC channel keeps the worker alive, not the port.
  ref () {}
  unref () {}
}

module.exports = { HandedPort }
