'use strict'

const { readOptions } = require('./options')
const { configErrorLines } = require('./config-report')
const { checkScript } = require('../application/check')
const { checkLogDirectory } = require('../logging')
const { prepareMods } = require('../application/mods/prepare')

// What a refusal leaves running, by where readOptions refused.
const KEPT = {
  configuration: 'the old configuration stays in use',
  certificates: 'the old configuration and certificates stay in use'
}

/**
 * Read and check everything a reload needs before anything changes: what
 * readOptions reads, the script, the log directory and the mods. A refusal
 * is logged with its reason; the caller keeps what it runs (and counts the
 * refusal).
 * @param {object} options the runtime options in use
 * @param {object} args parsed command line
 * @param {object} log
 * @returns {Promise<{options: object, prepared: {mods: object[], remove: Function}} | null>}
 *   the new runtime options and the mods made ready for them; null when refused
 */
async function prepareReload (options, args, log) {
  let next
  try {
    next = await readOptions(options, args, (line) => log.warn(line))
  } catch (err) {
    for (const line of configErrorLines(err, options.configFile)) log.error(line)
    return refuse(log, KEPT[err.refused] || KEPT.configuration)
  }
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

module.exports = { prepareReload, ReloadQueue }
