'use strict'

const { serve } = require('./ipc')
const { statsServices } = require('./cluster-stats')
const { metricsServices } = require('./metrics/query')
const { throttleServices } = require('./auth/cluster-throttle')

/**
 * What the workers share: the services one process (the primary, or the
 * single process in --single-threaded) answers for all of them, over
 * whichever channel connects it to a worker (lib/ipc.js). A service neither
 * knows nor asks which mode it runs in.
 */
class Coordinator {
  /**
   * @param {{warn: Function}} log
   * @param {() => Array<{slot: number|null, pid: number|null, peer: import('./ipc').Peer|null}>} targets
   *   every worker slot; `peer` null for a slot without a ready worker
   */
  constructor (log, targets) {
    this.targets = targets
    // The one table of cluster-wide services: act -> service(msg, from).
    this.services = {
      ...throttleServices(log),
      ...statsServices(this),
      ...metricsServices(this)
    }
    this.table = serve(this.services)
  }

  /**
   * Ask every worker the same question at once.
   * @param {string} act
   * @param {number} timeout ms each worker gets to answer
   * @returns {Promise<Array<{slot: number|null, pid: number|null, stats: *}>>}
   *   one row per slot, `stats` null for a worker that did not answer
   */
  askEvery (act, timeout) {
    return Promise.all(this.targets().map(({ slot, pid, peer }) => peer === null
      ? { slot, pid, stats: null }
      : peer.request(act, {}, { timeout }).then((stats) => ({ slot, pid, stats }), () => ({ slot, pid, stats: null }))))
  }
}

module.exports = { Coordinator }
