'use strict'

const { performance } = require('node:perf_hooks')

/**
 * The primary's side of one worker: which socket each of its server roles
 * listens on, and the connections handed to it that it has not yet
 * acknowledged (the primary's descriptor of each is kept until then).
 */
class WorkerIntake {
  /**
   * @param {import('../ipc').Peer} peer the worker's
   */
  constructor (peer) {
    this.peer = peer
    // role -> the ConnectionDispatch of the socket the worker was sent for it
    this.sockets = new Map()
    // id -> {dispatch, client}
    this.inFlight = new Map()
    this.lastId = 0
    this.gone = false
  }

  /**
   * @param {string} role 'main' or 'plain'
   * @param {import('./connection-dispatch').ConnectionDispatch} dispatch
   */
  assign (role, dispatch) {
    const previous = this.sockets.get(role)
    if (previous !== undefined && previous !== dispatch) previous.remove(this)
    this.sockets.set(role, dispatch)
  }

  /**
   * @param {import('./connection-dispatch').ConnectionDispatch} dispatch of the socket it came on
   * @param {object} client the connection's TCP or Pipe handle
   * @param {boolean} [back] the worker passed it on itself, and no other could take it
   */
  give (dispatch, client, back = false) {
    const id = ++this.lastId
    this.inFlight.set(id, { dispatch, client, at: performance.now() })
    const fields = { role: this.roleOf(dispatch), id }
    if (back) fields.back = true
    if (this.peer.notify('conn', fields, client)) return
    this.inFlight.delete(id)
    this.leave()
    dispatch.hand(client)
  }

  /** @returns {number} when the oldest unacknowledged connection was handed over (Maps keep insertion order) */
  oldestAt () {
    for (const entry of this.inFlight.values()) return entry.at
    return Infinity
  }

  roleOf (dispatch) {
    for (const [role, socket] of this.sockets) if (socket === dispatch) return role
    return null
  }

  /**
   * The worker's 'conn-taken': it took these connections (the primary
   * closes its own descriptors), or its server for their role was not
   * listening (each goes to another worker, and this one leaves the round
   * until it listens again).
   * @param {{ids: number[], taken: boolean}} msg
   */
  acknowledged (msg) {
    if (!Array.isArray(msg.ids)) return
    const dispatches = new Set()
    for (const id of msg.ids) {
      const entry = this.inFlight.get(id)
      if (entry === undefined) continue
      this.inFlight.delete(id)
      dispatches.add(entry.dispatch)
      if (msg.taken === true) {
        entry.client.close()
      } else {
        entry.dispatch.remove(this)
        entry.dispatch.hand(entry.client)
      }
    }
    for (const dispatch of dispatches) dispatch.release()
  }

  /**
   * The worker's server for `role` listens (or stopped): it joins (or
   * leaves) the round of that role's socket.
   * @param {string} role
   * @param {boolean} open
   */
  listening (role, open) {
    const dispatch = this.sockets.get(role)
    if (dispatch === undefined) return
    if (!open || this.gone) {
      dispatch.remove(this)
      return
    }
    dispatch.add(this)
  }

  /** Take no more connections (the worker is retiring); what it was handed it may still take. */
  leave () {
    for (const dispatch of this.sockets.values()) dispatch.remove(this)
  }

  /**
   * The worker is gone: what it had not acknowledged goes to the others.
   * Called once its channel has closed, so that every acknowledgement it
   * sent before it died has been read.
   */
  lost () {
    this.gone = true
    this.leave()
    const entries = [...this.inFlight.values()]
    this.inFlight.clear()
    for (const { dispatch, client } of entries) dispatch.hand(client)
  }
}

module.exports = { WorkerIntake }
