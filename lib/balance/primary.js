'use strict'

/**
 * A count of connections per serving worker, as reported by
 * lib/balance/worker.js, and what each worker was last told of them, so
 * that a message goes out only on a change. Retiring workers do not count.
 */
class WorkerCounts {
  /**
   * @param {(worker: object, value: *) => void} send tells one worker
   */
  constructor (send) {
    this.send = send
    this.loads = new Map()
    this.told = new Map()
  }

  report (worker, count) {
    if (!Number.isInteger(count) || count < 0) return
    this.loads.set(worker, count)
    this.update()
  }

  forget (worker) {
    this.told.delete(worker)
    if (this.loads.delete(worker)) this.update()
  }

  total () {
    let total = 0
    for (const count of this.loads.values()) total += count
    return total
  }

  /** Send `value` unless the worker was last told the same (`key`). */
  tell (worker, value, key) {
    if (this.told.get(worker) === key) return
    this.told.set(worker, key)
    this.send(worker, value)
  }
}

/**
 * The HTTP/1 connections each worker holds, and the fair share it tells
 * them: the total over the serving workers, rounded up; null to a worker
 * that has nobody to share with.
 */
class FairShare extends WorkerCounts {
  update () {
    const share = this.loads.size < 2 ? null : Math.ceil(this.total() / this.loads.size)
    for (const worker of this.loads.keys()) this.tell(worker, share, share)
  }
}

/**
 * Every connection each worker holds (HTTP/2 sessions and tunnels too,
 * unlike FairShare). Each worker is told what the others hold and how many
 * they are, so that it can tell, as it accepts a connection, whether
 * keeping it would put it over its part (lib/balance/pass-policy.js).
 */
class PeerLoads extends WorkerCounts {
  update () {
    const total = this.total()
    const peers = this.loads.size - 1
    for (const [worker, open] of this.loads) {
      const others = total - open
      this.tell(worker, { others, peers }, others + '/' + peers)
    }
  }
}

/**
 * What the primary keeps of the workers' load reports: the HTTP/1 fair
 * share and what the others hold, each told to the workers on a change.
 */
class WorkerLoads {
  /**
   * @param {(worker: object, act: string, fields: object) => void} tell sends one worker a message
   */
  constructor (tell) {
    this.fairShare = new FairShare((worker, share) => tell(worker, 'fair-share', { connections: share }))
    this.peerLoads = new PeerLoads((worker, load) => tell(worker, 'peer-load', load))
  }

  /** @param {{connections: number, open?: number}} msg a worker's 'load' report */
  report (worker, msg) {
    this.fairShare.report(worker, msg.connections)
    this.peerLoads.report(worker, msg.open)
  }

  /** The worker retires or is gone: it no longer counts, and is told nothing more. */
  forget (worker) {
    this.fairShare.forget(worker)
    this.peerLoads.forget(worker)
  }
}

module.exports = { FairShare, PeerLoads, WorkerLoads }
