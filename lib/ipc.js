'use strict'

const { EventEmitter } = require('node:events')
const { svrError } = require('./errors')

/**
 * Messages between the primary and its workers are plain objects tagged with
 * a namespace, so traffic that a mod or script sends over the same channel
 * with process.send() can never be mistaken for ours.
 */
const NS = 'svr'
// The act of every answer to a request; its `id` names the request.
const REPLY = 'reply'

/**
 * @param {string} act
 * @param {object} [fields]
 * @returns {{ns: string, act: string}}
 */
function message (act, fields) {
  return Object.assign({ ns: NS, act }, fields)
}

/**
 * Route a message to the handler registered for its act. Messages of other
 * senders and unknown acts are ignored, so older and newer processes can
 * share a channel during a rolling reload.
 * @param {Object<string, Function>} table act -> handler(msg, ...extra)
 * @param {*} msg
 * @returns {boolean} whether a handler ran
 */
function dispatch (table, msg, ...extra) {
  if (msg === null || typeof msg !== 'object' || msg.ns !== NS) return false
  if (!Object.hasOwn(table, msg.act)) return false
  table[msg.act](msg, ...extra)
  return true
}

/**
 * One end of a channel: tagged messages one way, and requests whose answer
 * comes back as a `reply` with the same id. Every request of this end waits
 * in one pending map, so a late answer (after its timeout) finds nothing and
 * is dropped.
 */
class Peer {
  /**
   * @param {(msg: object, handle?: object, written?: Function) => boolean} send delivers a
   *   message (with a socket handle, where the channel carries one) to the
   *   other end; false when that end is gone
   */
  constructor (send) {
    this.send = send
    this.pending = new Map()
    this.lastId = 0
  }

  /**
   * @param {string} act
   * @param {object} [fields]
   * @param {{timeout: number}} options ms to wait for the reply
   * @returns {Promise<*>} the value the other end answered
   * @throws {Error} code SVR_ERR_IPC_TIMEOUT when no answer came in time,
   *   SVR_ERR_IPC_GONE when the other end is gone, SVR_ERR_IPC_FAILED when it answered with an error
   */
  request (act, fields, { timeout }) {
    const id = ++this.lastId
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(svrError('SVR_ERR_IPC_TIMEOUT', [act, timeout]))
      }, timeout)
      this.pending.set(id, { resolve, reject, timer, act })
      if (!this.send(message(act, { ...fields, id }))) {
        this.pending.delete(id)
        clearTimeout(timer)
        reject(svrError('SVR_ERR_IPC_GONE', [act]))
      }
    })
  }

  /**
   * Send without waiting for an answer.
   * @param {string} act
   * @param {object} [fields]
   * @param {object} [handle] a socket's handle, sent with the message
   * @param {(err: Error|null) => void} [written] called once the message
   *   (and the handle's descriptor) has been written to the channel; with an
   *   error only when the write failed at once
   * @returns {boolean} whether the other end was there to take it
   */
  notify (act, fields, handle, written) {
    return this.send(message(act, fields), handle, written)
  }

  /**
   * Hand a `reply` to the request waiting for it.
   * @param {{id: number, value?: *, error?: string}} msg
   */
  settle (msg) {
    const entry = this.pending.get(msg.id)
    if (entry === undefined) return
    this.pending.delete(msg.id)
    clearTimeout(entry.timer)
    if (typeof msg.error === 'string') entry.reject(svrError('SVR_ERR_IPC_FAILED', [entry.act, msg.error]))
    else entry.resolve(msg.value)
  }
}

/**
 * Dispatch-table entries for a table of services: each gets the message and
 * the Peer it came from, and what it returns (or resolves to) goes back as
 * the `reply` when the message carries an id; without one it is a notice
 * and nothing is answered. A service that throws answers an error, so a
 * malformed message from a mod can never bring down the process that serves.
 * Every table also settles the replies to this end's own requests.
 * @param {Object<string, (msg: object, from: Peer) => *>} services
 * @returns {Object<string, (msg: object, from: Peer) => void>}
 */
function serve (services) {
  const table = { [REPLY]: (msg, from) => from.settle(msg) }
  for (const [act, service] of Object.entries(services)) {
    table[act] = (msg, from) => {
      const asked = Number.isInteger(msg.id)
      new Promise((resolve) => resolve(service(msg, from))).then(
        (value) => { if (asked) from.notify(REPLY, { id: msg.id, value }) },
        (err) => { if (asked) from.notify(REPLY, { id: msg.id, error: err.message }) })
    }
  }
  return table
}

/**
 * The channel to the primary, seen from a worker: its Peer for the primary.
 * @param {{connected: boolean, send: Function}} [channel] the cluster
 *   worker's `process`, or the worker end of an inProcessChannel()
 * @returns {Peer}
 */
function primaryPeer (channel = process) {
  return new Peer((msg, handle, written) => {
    if (!channel.connected) return false
    channel.send(msg, handle, written)
    return true
  })
}

/**
 * The cluster channel, seen from the primary: its Peer for one worker.
 * @param {{isConnected: () => boolean, send: Function}} worker a cluster.Worker, or an in-process one
 * @returns {Peer}
 */
function workerPeer (worker) {
  return new Peer((msg, handle) => {
    if (!worker.isConnected()) return false
    worker.send(msg, handle)
    return true
  })
}

/**
 * One end of an in-process channel, shaped like the part of a cluster
 * worker's `process` that IPC uses: `send(msg[, handle][, callback])`,
 * `connected`, `disconnect()`, and the events 'message' (msg, handle) and
 * 'disconnect'.
 */
class ChannelEnd extends EventEmitter {
  constructor () {
    super()
    this.other = null
    this.connected = true
  }

  /**
   * @param {object} msg
   * @param {*} [handle] passed along as it is (no descriptor crosses here)
   * @param {Function} [callback] called once the message is delivered
   * @returns {boolean} false once the channel is closed
   */
  send (msg, handle, callback) {
    if (typeof handle === 'function') {
      callback = handle
      handle = undefined
    }
    if (!this.connected) return false
    // Delivered on a later turn of the event loop, as the cluster channel would.
    setImmediate(() => {
      if (this.other.connected) this.other.emit('message', msg, handle)
      if (typeof callback === 'function') callback(null)
    })
    return true
  }

  /** Close both ends; each emits 'disconnect' once. */
  disconnect () {
    for (const end of [this, this.other]) {
      if (!end.connected) continue
      end.connected = false
      setImmediate(() => end.emit('disconnect'))
    }
  }
}

/**
 * A channel inside one process (--single-threaded): two ends, each handing
 * what it sends to the other's 'message' listeners on a later turn of the
 * event loop.
 * @returns {{a: ChannelEnd, b: ChannelEnd}}
 */
function inProcessChannel () {
  const a = new ChannelEnd()
  const b = new ChannelEnd()
  a.other = b
  b.other = a
  return { a, b }
}

/**
 * Two Peers over an inProcessChannel(), each end's messages dispatched to
 * a table: the coordinator and a runtime in one process (unit tests).
 * @param {() => Object<string, Function>} tableA the table of end A (read at delivery)
 * @param {() => Object<string, Function>} tableB the table of end B
 * @returns {{a: Peer, b: Peer, close: () => void}} a sends to B's table, b to A's
 */
function inProcessPair (tableA, tableB) {
  const channel = inProcessChannel()
  const pair = { a: primaryPeer(channel.a), b: primaryPeer(channel.b), close: () => channel.a.disconnect() }
  channel.a.on('message', (msg) => dispatch(tableA(), msg, pair.a))
  channel.b.on('message', (msg) => dispatch(tableB(), msg, pair.b))
  return pair
}

module.exports = { NS, REPLY, message, dispatch, Peer, serve, primaryPeer, workerPeer, inProcessChannel, inProcessPair }
