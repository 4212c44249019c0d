'use strict'

const net = require('node:net')
const util = require('node:util')
const { parseListenSpec } = require('../listen')

// Node's cluster module lets the primary bind a shared listening socket,
// but closes it as soon as the last worker using it is gone: while every
// worker is down, connections are refused, and a socket bound to port 0
// comes back on another port. So the primary binds the sockets itself, the
// way nginx's master does, and keeps them for as long as a configuration
// in use names them. It never listens on them (it would accept connections
// itself); the first worker's listen() puts the socket in the listening
// state, and the socket stays in it while the primary holds its
// descriptor, so clients wait in the kernel's backlog for the next worker.

/**
 * The addresses a configuration listens on, by server role.
 * @param {object} config
 * @returns {Array<{role: 'main'|'plain', value: number|string}>}
 */
function listenTargets (config) {
  if (!config.secure) return [{ role: 'main', value: config.port }]
  const targets = [{ role: 'main', value: config.sport }]
  if (!config.disableNonEncryptedServer) targets.push({ role: 'plain', value: config.port })
  return targets
}

// One socket per address; but port 0 names a new port each time, so the
// main and the plain server both on "127.0.0.1:0" get one each.
function socketKey (target) {
  const spec = parseListenSpec(target.value)
  return JSON.stringify(spec.port === 0 ? { ...spec, role: target.role } : spec)
}

/**
 * Bind (without listening) a socket the way Node's cluster primary does for
 * its workers: `net._createServerHandle` is the function it uses.
 * @param {{port?: number, host?: string, path?: string}} spec
 * @returns {{handle: object, address: string|{address: string, family: string, port: number}}}
 *   the bound TCP or Pipe handle, and its address as server.address() gives it
 * @throws {Error} with `code` (EADDRINUSE, ...) and `listenSpec`
 */
function bindSpec (spec) {
  if (spec.path !== undefined) {
    const handle = net._createServerHandle(spec.path, -1, -1)
    if (typeof handle === 'number') throw bindError(handle, spec)
    return { handle, address: spec.path }
  }
  const handle = net._createServerHandle(spec.host === undefined ? null : spec.host, spec.port, net.isIPv6(spec.host) ? 6 : 4)
  if (typeof handle === 'number') throw bindError(handle, spec)
  // libuv reports EADDRINUSE of a TCP bind only at the next call, and a
  // listen() after a failed bind would take a random port.
  const address = {}
  const errno = handle.getsockname(address)
  if (errno !== 0) {
    handle.close()
    throw bindError(errno, spec)
  }
  return { handle, address }
}

function bindError (errno, spec) {
  const code = util.getSystemErrorName(errno)
  const err = new Error('bind ' + code)
  err.code = code
  err.errno = errno
  err.syscall = 'bind'
  err.listenSpec = spec
  return err
}

/**
 * The listening sockets of a cluster, owned by the primary and handed to
 * every worker it forks. One socket per distinct address, shared by every
 * configuration that names it, so a reload that keeps the address keeps
 * the socket (and its port, if it was 0).
 */
class ListenSockets {
  /**
   * @param {(handle: object) => void} [onClose] told of each handle closed
   */
  constructor (onClose = () => {}) {
    this.onClose = onClose
    // key -> {spec, bound: the spec with the port actually bound, handle, address}
    this.entries = new Map()
    // false while the console has closed the server: no socket is held then.
    this.open = true
  }

  /**
   * Bind every address of `config` not bound yet. While closed, only
   * remember them, to be bound by reopen().
   * @param {object} config
   * @throws {Error} from bindSpec; what this call bound is released again
   */
  acquire (config) {
    const added = []
    try {
      for (const target of listenTargets(config)) {
        const key = socketKey(target)
        if (this.entries.has(key)) continue
        const spec = parseListenSpec(target.value)
        const entry = { spec, bound: spec, handle: null, address: null }
        if (this.open) this.bindEntry(entry)
        this.entries.set(key, entry)
        added.push(key)
      }
    } catch (err) {
      for (const key of added) this.closeEntry(key)
      throw err
    }
  }

  bindEntry (entry) {
    const { handle, address } = bindSpec(entry.bound)
    entry.handle = handle
    entry.address = address
    // Bound again later (console open) it must be the same port.
    if (entry.bound.port === 0) entry.bound = { ...entry.bound, port: entry.address.port }
  }

  closeEntry (key) {
    const entry = this.entries.get(key)
    if (entry.handle !== null) this.closeHandle(entry.handle)
    this.entries.delete(key)
  }

  closeHandle (handle) {
    handle.close()
    this.onClose(handle)
  }

  /**
   * @param {object} config
   * @returns {Array<{role: string, handle: object}>} the bound sockets a
   *   worker of `config` listens on; none while closed
   */
  handles (config) {
    if (!this.open) return []
    return listenTargets(config).map((target) => ({ role: target.role, handle: this.entries.get(socketKey(target)).handle }))
  }

  /**
   * @param {object} config
   * @returns {{main: string|object, plain: string|object|null}} the bound addresses, for listeningLines()
   */
  addresses (config) {
    const addresses = { main: null, plain: null }
    for (const target of listenTargets(config)) addresses[target.role] = this.entries.get(socketKey(target)).address
    return addresses
  }

  /**
   * Close the sockets no configuration in use names any more.
   * @param {object[]} configs every configuration a worker may still be forked with
   */
  release (configs) {
    const used = new Set()
    for (const config of configs) {
      for (const target of listenTargets(config)) used.add(socketKey(target))
    }
    for (const key of [...this.entries.keys()]) {
      if (!used.has(key)) this.closeEntry(key)
    }
  }

  /** Console `close`: let go of every socket, so that clients are refused once the workers closed theirs. */
  close () {
    this.open = false
    for (const entry of this.entries.values()) {
      if (entry.handle !== null) this.closeHandle(entry.handle)
      entry.handle = null
    }
  }

  /**
   * Console `open`: bind every socket again, on the address it had.
   * @throws {Error} from bindSpec; the sockets stay closed then
   */
  reopen () {
    try {
      for (const entry of this.entries.values()) this.bindEntry(entry)
    } catch (err) {
      this.close()
      throw err
    }
    this.open = true
  }
}

module.exports = { ListenSockets, listenTargets, bindSpec }
