'use strict'

/**
 * What a cluster worker's server listens on: the listening socket the
 * primary bound and shares with every worker, each of which accepts from
 * its kernel queue. Wrapped, so that
 * - a connection accepted here goes, before a byte of it is read, to the
 *   primary when keeping it would put this worker over its part of the
 *   connections (WorkerBalance.shouldPass); the primary hands it to another
 *   worker (lib/primary/connection-dispatch.js). Whichever worker is waiting
 *   in epoll when a burst arrives accepts most of it, and an HTTP/2 session
 *   stays where it lands for as long as it lives;
 * - a connection the primary hands over (take) goes through Node's own
 *   accept path in the server, as one accepted here does (its count,
 *   maxConnections, the 'connection' event);
 * - the primary knows whether the server listens, and hands it connections only then.
 * Node's server adopts it the way listenOnHandle() adopts a bound socket:
 * it sets `onconnection` and calls listen(), close(), ref() and unref().
 */
class SharedPort {
  /**
   * @param {string} role the server's role, 'main' or 'plain'
   * @param {object} handle the bound TCP or Pipe handle the primary sent
   * @param {import('../ipc').Peer} coordinator the primary
   * @param {import('../balance/worker').WorkerBalance} balance the worker's
   */
  constructor (role, handle, coordinator, balance) {
    this.role = role
    this.handle = handle
    this.coordinator = coordinator
    this.balance = balance
    this.onconnection = null
    this.open = false
    // A Pipe handle has none: the server's address() is null then (the
    // primary prints the path).
    if (typeof handle.getsockname === 'function') this.getsockname = (out) => handle.getsockname(out)
  }

  listen (backlog) {
    this.handle.onconnection = (err, client) => this.accepted(err, client)
    const err = this.handle.listen(backlog)
    if (err !== 0) return err
    this.open = true
    this.coordinator.notify('port-open', { role: this.role })
    return 0
  }

  // A failed accept (EMFILE, ENFILE, say) leaves the connection in the
  // queue, for this worker's next try or another's: Node's server would emit
  // it as an 'error', which a listening worker's server has no listener for.
  accepted (err, client) {
    if (err !== 0 || client === undefined) return
    if (this.balance.shouldPass() && this.pass(client)) return
    this.onconnection(0, client)
  }

  /**
   * Send an accepted connection to the primary. Once the message is
   * written the descriptor travels with it, and this worker's copy is
   * closed; should the write fail at once, the connection stays here (Node
   * reports a later failure of the write as a success: the connection is
   * then lost, as it is to a primary out of descriptors).
   * @returns {boolean} false when the primary is gone (the connection stays here)
   */
  pass (client) {
    return this.coordinator.notify('conn-pass', { role: this.role }, client, (err) => {
      if (err === null || err === undefined || !this.take(client)) client.close()
    })
  }

  close (callback) {
    if (this.open) {
      this.open = false
      this.coordinator.notify('port-closed', { role: this.role })
    }
    this.handle.close(callback)
  }

  /**
   * @param {object} client the TCP or Pipe handle of a connection the primary handed over
   * @returns {boolean} whether the server took it (false once it stopped listening)
   */
  take (client) {
    if (!this.open || typeof this.onconnection !== 'function') return false
    this.onconnection(0, client)
    return true
  }

  ref () {
    this.handle.ref()
  }

  unref () {
    this.handle.unref()
  }
}

module.exports = { SharedPort }
