'use strict'

const { FULL } = require('./select')

/**
 * The requests of one route (in one worker) waiting for an upstream under
 * its `maxConnections`, first come first served, at most `size` of them,
 * each for at most `timeout` ms. A request that finishes with an upstream
 * wakes the queues waiting on it (Upstream#release).
 */
class RouteQueue {
  /**
   * @param {{members: import('./member').Member[]}} route
   * @param {number} size
   * @param {number} timeout ms
   * @param {import('./upstreams').ProxyUpstreams} registry the worker's upstreams, which count what the queue turns away
   */
  constructor (route, size, timeout, registry) {
    this.route = route
    this.size = size
    this.timeout = timeout
    this.registry = registry
    // The metric's label: the upstreams the requests wait for.
    this.label = [...new Set(route.members.map((member) => member.upstream.name))].join(' ')
    registry.queues.add(this)
    this.waiting = []
    this.wake = this.wake.bind(this)
  }

  /**
   * @param {{choose: () => unknown, proceed: (choice: unknown) => void, expire: () => void}} waiter
   *   choose() picks an upstream for the request without sending it, FULL
   *   while every one is still at its limit; proceed(choice) sends it;
   *   expire() answers it once it waited `timeout`
   * @returns {boolean} false when the queue is full
   */
  add (waiter) {
    if (this.waiting.length >= this.size) {
      this.registry.countRejection(this.label, 'full')
      return false
    }
    if (this.waiting.length === 0) this.listen(true)
    const entry = { waiter, timer: setTimeout(() => this.expire(entry), this.timeout) }
    this.waiting.push(entry)
    return true
  }

  /**
   * A waiter that no longer waits (its client left).
   * @param {object} waiter
   */
  remove (waiter) {
    const index = this.waiting.findIndex((entry) => entry.waiter === waiter)
    if (index !== -1) this.drop(index)
  }

  // An upstream of the route has room again: the oldest waiters go on
  // while their requests find one. A waiter leaves the queue before its
  // request is sent, since sending may fail at once and release a
  // connection, which comes back here.
  wake () {
    while (this.waiting.length !== 0) {
      const { waiter } = this.waiting[0]
      const choice = waiter.choose()
      if (choice === FULL) return
      this.drop(0)
      waiter.proceed(choice)
    }
  }

  expire (entry) {
    const index = this.waiting.indexOf(entry)
    if (index === -1) return
    this.drop(index)
    this.registry.countRejection(this.label, 'timeout')
    entry.waiter.expire()
  }

  drop (index) {
    clearTimeout(this.waiting[index].timer)
    this.waiting.splice(index, 1)
    if (this.waiting.length === 0) this.listen(false)
  }

  // Only a queue with waiters hears of released connections.
  listen (on) {
    for (const { upstream } of this.route.members) {
      if (on) upstream.waiters.add(this.wake)
      else upstream.waiters.delete(this.wake)
    }
  }
}

module.exports = { RouteQueue }
