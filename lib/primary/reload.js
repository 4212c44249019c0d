'use strict'

const { loadConfig } = require('../config/load')
const { checkWebroot } = require('../config/webroot')
const { checkAcme } = require('../acme/storage')
const { readProxyCa } = require('../proxy/ca-files')
const { configErrorLines } = require('./config-report')
const { readTlsMaterial } = require('../tls/material')
const { checkScript } = require('../application/check')
const { checkLogDirectory } = require('../logging')
const { prepareMods } = require('../application/mods/prepare')
const { modKeysHook } = require('../application/mods/declarations')

/**
 * The configuration as the command line amends it (`--secure`).
 * @param {object} config validated, frozen
 * @param {{secure?: boolean}} args parsed command line
 * @returns {object}
 */
function withOverrides (config, args) {
  return args.secure && !config.secure ? Object.freeze({ ...config, secure: true }) : config
}

/**
 * Read and check everything a reload needs before anything changes: the
 * configuration, its certificates, the proxy's CA files, the script, the
 * log directory and the mods. A refusal is logged with its reason; the caller keeps what it runs
 * (and counts the refusal).
 * @param {object} options the runtime options in use
 * @param {object} args parsed command line
 * @param {object} log
 * @returns {Promise<{options: object, prepared: {mods: object[], remove: Function}} | null>}
 *   the new runtime options and the mods made ready for them; null when refused
 */
async function prepareReload (options, args, log) {
  let config
  let proxyCa
  try {
    const warn = (line) => log.warn(options.configFile + ': ' + line)
    const extraKeys = modKeysHook(options)
    config = withOverrides(await loadConfig(options.configFile, { installDir: options.installDir, warn, extraKeys }), args)
    await checkWebroot(options.configFile, config)
    await checkAcme(options.configFile, config)
    proxyCa = await readProxyCa(options.configFile, config)
  } catch (err) {
    for (const line of configErrorLines(err, options.configFile)) log.error(line)
    return refuse(log, 'the old configuration stays in use')
  }
  let tls = null
  try {
    if (config.secure) tls = await readTlsMaterial(config, options.ticketKeys)
  } catch (err) {
    log.error(err.message)
    return refuse(log, 'the old configuration and certificates stay in use')
  }
  const next = { ...options, config, tls, proxyCa }
  try {
    await checkScript(next)
    await checkLogDirectory(next)
    const prepared = await prepareMods(next)
    return { options: { ...next, mods: prepared.mods }, prepared }
  } catch (err) {
    log.error(err.message)
    return refuse(log, 'the old configuration, script and mods stay in use')
  }
}

function refuse (log, reason) {
  log.error('reload refused: ' + reason)
  return null
}

/**
 * One reload at a time, none once a stop began: a reload that finished
 * after a later one would put an older configuration back, and one during
 * a stop would answer the health path with 200 again. Requests that come
 * while one runs are folded into one more run after it.
 */
class ReloadQueue {
  /**
   * @param {() => Promise<void>} apply one reload
   * @param {() => string|null} refusal why no reload may start now ("stopping"), null when one may
   * @param {{warn: Function}} log
   */
  constructor (apply, refusal, log) {
    this.apply = apply
    this.refusal = refusal
    this.log = log
    this.running = false
    this.pending = false
  }

  /**
   * @returns {Promise<void>} settles when this request's reload (or the one it joined) is over
   */
  async request () {
    const refusal = this.refusal()
    if (refusal !== null) {
      this.log.warn('reload ignored: server is ' + refusal)
      return
    }
    if (this.running) {
      this.pending = true
      return
    }
    this.running = true
    try {
      await this.apply()
    } finally {
      this.running = false
      if (this.pending) {
        this.pending = false
        this.request()
      }
    }
  }
}

module.exports = { prepareReload, withOverrides, ReloadQueue }
