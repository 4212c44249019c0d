'use strict'

// The accept backlog Node's net.Server asks for.
const BACKLOG = 511

// With --single-threaded the Supervisor's sockets and its in-process
// workers' servers live in one process, and a socket descriptor cannot be
// handed to two servers of one process the way the cluster hands one to
// every worker: the first server to drain would close it under the others.
// So the socket listens once, here, and each connection it accepts goes to
// the server of the newest worker that listens on it. A worker's server
// "listens" on a port of the feed: an object shaped like the listening
// handle a net.Server adopts (as a cluster worker's server adopts the one
// the cluster module makes for round-robin), so Node's own accept path runs
// in that server: it counts the connection (getConnections, the close
// callback of a drain), applies maxConnections and emits 'connection'; and
// closing the server lets go of the port, not of the socket.

/**
 * One bound socket of the Supervisor, accepting for the servers that
 * listen on its ports.
 */
class ConnectionFeed {
  /**
   * @param {object} handle a bound TCP or Pipe handle (lib/primary/listen-sockets.js)
   */
  constructor (handle) {
    this.handle = handle
    // Its address, for server.address() on a port even once the socket is
    // closed (a TCP handle's; a unix socket's handle has none to give).
    this.address = null
    if (typeof handle.getsockname === 'function') {
      const out = {}
      if (handle.getsockname(out) === 0) this.address = out
    }
    this.listening = false
    // Ports listened on, oldest first: a connection goes to the newest.
    this.ports = []
  }

  /**
   * @returns {ConnectionPort} a port for one server to listen on
   */
  port () {
    return new ConnectionPort(this)
  }

  /**
   * Put the socket in the listening state, once.
   * @returns {number} 0, or the libuv error of listen()
   */
  start () {
    if (this.listening) return 0
    this.handle.onconnection = (err, client) => this.deliver(err, client)
    const err = this.handle.listen(BACKLOG)
    if (err === 0) this.listening = true
    return err
  }

  deliver (err, client) {
    const port = this.ports[this.ports.length - 1]
    if (port !== undefined) {
      port.onconnection(err, client)
      return
    }
    // The Supervisor retires a worker only once another listens, so this
    // is a connection accepted as the last server let go: there is nobody
    // to answer it.
    if (client !== undefined) client.close()
  }

  attach (port) {
    this.ports.push(port)
  }

  detach (port) {
    const at = this.ports.indexOf(port)
    if (at !== -1) this.ports.splice(at, 1)
  }
}

/**
 * What a net.Server sees as its listening handle: `listen()` joins the
 * feed, `close()` leaves it. Node sets `onconnection` on it when the server
 * adopts it (the accept callback of net.Server, which the feed calls).
 */
class ConnectionPort {
  constructor (feed) {
    this.feed = feed
    this.onconnection = null
    if (feed.address !== null) {
      // server.address(): the address of the socket it is fed from.
      this.getsockname = (out) => {
        Object.assign(out, feed.address)
        return 0
      }
    }
  }

  listen () {
    const err = this.feed.start()
    if (err === 0) this.feed.attach(this)
    return err
  }

  close (callback) {
    this.feed.detach(this)
    if (typeof callback === 'function') process.nextTick(callback)
  }

  // The feed's socket is what keeps the process alive, not the port.
  ref () {}
  unref () {}
}

/**
 * The feeds of one Supervisor, one per bound socket, made on first use.
 */
class ConnectionFeeds {
  constructor () {
    this.feeds = new WeakMap()
  }

  /**
   * @param {object} handle a bound TCP or Pipe handle
   * @returns {ConnectionPort} a new port of the handle's feed
   */
  port (handle) {
    let feed = this.feeds.get(handle)
    if (feed === undefined) {
      feed = new ConnectionFeed(handle)
      this.feeds.set(handle, feed)
    }
    return feed.port()
  }
}

module.exports = { ConnectionFeeds }
