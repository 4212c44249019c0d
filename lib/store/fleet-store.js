'use strict'

const { EventEmitter } = require('node:events')
const os = require('node:os')
const crypto = require('node:crypto')
const { readStoreSecrets } = require('./secrets')
const { Sealer } = require('./sealing')

// Reconnection waits this long after the first failure, doubling up to the cap.
const RETRY_FIRST_MS = 100
const RETRY_MAX_MS = 5000
const CONNECT_TIMEOUT_MS = 2000

/**
 * The primary's connection to the fleet's Redis or Valkey server (`store`,
 * docs/fleet.md), through ioredis. Commands never wait for a connection:
 * while the store is down they fail at once (no offline queue), and each
 * feature acts as without a store until 'up' says it is back. Being down is
 * logged once, and its end once.
 * @fires FleetStore#up the connection is ready (again)
 * @fires FleetStore#down it was lost
 */
class FleetStore extends EventEmitter {
  /**
   * @param {object} settings `store`, resolved
   * @param {{password: string|null, ca: string|null, key: Buffer|null}} secrets
   * @param {{info: Function, warn: Function}} log
   */
  constructor (settings, secrets, log) {
    super()
    this.settings = settings
    this.log = log
    this.where = describe(settings)
    // This instance in the fleet view: its host name and a random part, as
    // one host may run several instances.
    this.instance = os.hostname() + '/' + crypto.randomBytes(4).toString('hex')
    this.up = false
    this.downSince = Date.now()
    this.everUp = false
    this.lastProblem = null
    // Seals the secrets the features keep in the store (`keyFile`).
    this.sealer = new Sealer(secrets.key)
    const Redis = require('ioredis')
    this.client = new Redis(clientOptions(settings, secrets))
    this.client.on('ready', () => this.onReady())
    this.client.on('error', (err) => this.onError(err))
    this.client.on('close', () => this.onClose())
  }

  onReady () {
    this.up = true
    this.lastProblem = null
    if (this.everUp) this.log.info('store ' + this.where + ' is back after ' + Math.round((Date.now() - this.downSince) / 1000) + ' s')
    else this.log.info('store ' + this.where + ' connected')
    this.everUp = true
    this.emit('up')
  }

  // ioredis reports every failed reconnection: only the first of a
  // period without the store is logged.
  onError (err) {
    if (this.lastProblem !== null) return
    this.lastProblem = err.code || err.message
    this.log.warn('store ' + this.where + (this.everUp ? ' lost' : ' not reachable') + ': ' + this.lastProblem +
      '; every instance acts on its own until it is back')
  }

  onClose () {
    if (!this.up) return
    this.up = false
    this.downSince = Date.now()
    if (this.lastProblem === null) {
      this.lastProblem = 'connection closed'
      this.log.warn('store ' + this.where + ' lost: connection closed; every instance acts on its own until it is back')
    }
    this.emit('down')
  }

  /** Close the connection (the server stops). */
  stop () {
    this.removeAllListeners()
    this.client.disconnect()
  }
}

/**
 * ioredis options for `store`: a URL or Sentinel, TLS with a CA, AUTH,
 * the database, the key prefix, timeouts and back-off.
 * @param {object} settings
 * @param {{password: string|null, ca: string|null}} secrets
 * @returns {object}
 */
function clientOptions (settings, secrets) {
  const url = new URL(settings.url)
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0
  const secure = url.protocol === 'rediss:'
  const options = {
    db,
    username: url.username === '' ? undefined : decodeURIComponent(url.username),
    password: secrets.password ?? undefined,
    keyPrefix: settings.prefix,
    // Fail at once while down rather than queue: the feature falls back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: settings.commandTimeout,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(RETRY_FIRST_MS * 2 ** Math.min(times - 1, 10), RETRY_MAX_MS),
    // svr's own name in CLIENT LIST, for the operator of a shared server.
    connectionName: 'svr'
  }
  // With Sentinel the URL's host is no server's: each connection checks the
  // certificate against the host it connects to (the sentinel's, or the
  // primary's as Sentinel names it).
  if (secure) options.tls = settings.sentinels.length === 0 ? { ca: secrets.ca ?? undefined, servername: url.hostname } : { ca: secrets.ca ?? undefined }
  if (settings.sentinels.length !== 0) {
    options.sentinels = settings.sentinels.map((entry) => {
      const colon = entry.lastIndexOf(':')
      return { host: entry.slice(0, colon), port: Number(entry.slice(colon + 1)) }
    })
    options.name = settings.masterName
    options.sentinelPassword = secrets.password ?? undefined
    options.sentinelRetryStrategy = options.retryStrategy
    // rediss:// means TLS to the sentinels and to the primary they name.
    if (secure) {
      options.sentinelTLS = options.tls
      options.enableTLSForSentinelMode = true
    }
  } else {
    options.host = url.hostname.replace(/^\[|\]$/g, '')
    options.port = url.port === '' ? 6379 : Number(url.port)
  }
  return options
}

/**
 * The store as log lines name it: never a password.
 * @param {object} settings
 * @returns {string}
 */
function describe (settings) {
  if (settings.sentinels.length !== 0) return 'sentinel ' + settings.masterName + ' (' + settings.sentinels.join(', ') + ')'
  const url = new URL(settings.url)
  return url.protocol + '//' + url.host + url.pathname
}

/**
 * The fleet store of a configuration, connecting in the background; null
 * without `store`. The secrets were checked when the configuration was
 * read; a file gone since fails here.
 * @param {object} options runtime options
 * @param {object} log
 * @returns {Promise<FleetStore|null>}
 */
async function openFleetStore (options, log) {
  const { config, configFile } = options
  if (config.store === null) return null
  const secrets = await readStoreSecrets(configFile, config)
  return new FleetStore(config.store, secrets, log)
}

module.exports = { FleetStore, openFleetStore, clientOptions, describe }
