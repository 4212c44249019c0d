'use strict'

const { serve } = require('../ipc')
const { statsServices } = require('../metrics/cluster-stats')
const { metricsServices } = require('../metrics/query')
const { throttleServices, throttleOptions } = require('../auth/cluster-throttle')
const { FleetThrottle } = require('../auth/fleet-throttle')
const { PrimaryCounters } = require('../metrics/primary')
const { CertificateManager } = require('../acme/manager')
const { TlsSessionCache } = require('../tls/session-cache')
const { proxyHealthServices } = require('../proxy/health-service')
const { rateLimitServices, SharedBuckets } = require('../traffic/shared-buckets')
const { FleetBuckets } = require('../traffic/fleet-buckets')
const { FleetView } = require('../store/fleet-view')
const { CacheCoordinator } = require('../cache/service')

/**
 * What the workers share: the services the primary answers for all of
 * them (with --single-threaded, for its in-process worker), over
 * whichever channel connects it to a worker (lib/ipc.js). A service neither
 * knows nor asks which mode it runs in.
 */
class Coordinator {
  /**
   * @param {{info: Function, warn: Function}} log
   * @param {() => Array<{slot: number|null, pid: number|null, peer: import('./ipc').Peer|null}>} targets
   *   every worker slot; `peer` null for a slot without a ready worker
   * @param {PrimaryCounters} [counters] the Supervisor's restart and reload counters, which it reports
   * @param {(act: string, fields: object) => void} [broadcast] tells every worker, also those
   *   not yet serving; by default the ready ones of `targets`
   */
  constructor (log, targets, counters = new PrimaryCounters(), broadcast = null) {
    this.log = log
    this.targets = targets
    this.counters = counters
    this.broadcast = broadcast || ((act, fields) => {
      for (const { peer } of this.targets()) if (peer !== null) peer.notify(act, fields)
    })
    // The fleet's store (useStore), null while there is none, and its
    // settings as started with: a reload does not reconnect.
    this.store = null
    this.storeSettings = undefined
    // The fleet's instances as the store knows them (useStore).
    this.fleet = null
    // Automatic HTTPS: certificates for the workers, answers to challenges.
    this.acme = new CertificateManager(this)
    // rateLimits: every worker's admissions, per rule and key.
    this.rateBuckets = new SharedBuckets()
    // The response cache: one fill per key, the byte budget.
    this.cache = new CacheCoordinator(this)
    // TLS sessions for clients that resume by session id.
    this.tlsSessions = new TlsSessionCache(this)
    // The one table of cluster-wide services: act -> service(msg, from).
    this.services = {
      ...throttleServices(this),
      ...statsServices(this),
      ...metricsServices(this),
      ...this.acme.services(),
      ...this.tlsSessions.services(),
      ...proxyHealthServices(this),
      ...rateLimitServices(this.rateBuckets),
      ...this.cache.services()
    }
    this.table = serve(this.services)
  }

  /**
   * Share what the fleet must share through its store (`store`): from now
   * on the login throttle counts in it, and rate limits fill its buckets.
   * Called before the first configure(), so that automatic HTTPS keeps its
   * account, certificates and lock in it from the start.
   * @param {import('../store/fleet-store').FleetStore} store
   */
  useStore (store) {
    this.store = store
    this.throttle = new FleetThrottle(store, throttleOptions(this))
    this.rateBuckets.share((apply) => new FleetBuckets(store, apply))
    this.fleet = new FleetView(store)
  }

  /**
   * Take the configuration in use (at start and after every reload): the
   * services that depend on it (automatic HTTPS, the response cache) follow it.
   * @param {object} options runtime options
   * @returns {Promise<void>} settles when what a reload asks of the response
   *   cache (purgeOnReload) is done
   */
  configure (options) {
    this.acme.configure(options)
    const store = JSON.stringify(options.config.store)
    if (this.storeSettings !== undefined && store !== this.storeSettings) {
      this.log.warn('"store" changed: the new settings take effect when svr is restarted, not on a reload')
    } else {
      this.storeSettings = store
    }
    return this.cache.configure(options)
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
