'use strict'

/**
 * The primary's view of how many connections each worker holds (reported by
 * lib/balance/worker.js), and the fair share it tells them: the total over
 * the serving workers, rounded up. Retiring workers do not count.
 */
class FairShare {
  /**
   * @param {(worker: object, share: number|null) => void} send tells one
   *   worker its share; null when it has nobody to share with
   */
  constructor (send) {
    this.send = send
    this.loads = new Map()
    // What each worker was last told, so that a message goes out only on a change.
    this.told = new Map()
  }

  report (worker, connections) {
    if (typeof connections !== 'number' || !Number.isFinite(connections) || connections < 0) return
    this.loads.set(worker, connections)
    this.update()
  }

  forget (worker) {
    this.told.delete(worker)
    if (this.loads.delete(worker)) this.update()
  }

  update () {
    let total = 0
    for (const connections of this.loads.values()) total += connections
    const share = this.loads.size < 2 ? null : Math.ceil(total / this.loads.size)
    for (const worker of this.loads.keys()) {
      if (this.told.get(worker) === share) continue
      this.told.set(worker, share)
      this.send(worker, share)
    }
  }
}

module.exports = { FairShare }
