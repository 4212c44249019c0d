'use strict'

const { createConfigLoader } = require('../config/load')
const { checkWebroot } = require('../config/webroot')
const { listenConfig } = require('../listen')
const { acmeConfig } = require('../acme/config')
const { checkAcme } = require('../acme/check')
const { proxyConfig } = require('../proxy/config')
const { trafficConfig } = require('../traffic/config')
const { cacheConfig } = require('../cache/config')
const { storeConfig } = require('../store/config')
const { readStoreSecrets } = require('../store/secrets')
const { readProxyCa } = require('../proxy/ca-files')
const { readTlsMaterial } = require('../tls/material')
const { modKeysHook } = require('../application/mods/declarations')

// The features' keywords, checks and resolved paths, registered with the
// loader (which imports no feature).
const loadConfig = createConfigLoader([listenConfig, proxyConfig, acmeConfig, trafficConfig, cacheConfig, storeConfig])

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
 * Everything the workers are given that is read from files, read and
 * checked before anything runs: the configuration, the webroot, ACME's
 * storage, the proxy routes' CA files, the store's password and CA files
 * and the TLS material. Start and
 * reload both call this, so a file read at one is read at the other.
 * @param {{configFile: string, installDir: string, disableMods: boolean,
 *   ticketKeys: object}} base what the options keep from the command line
 *   (or from the options in use, on reload)
 * @param {{secure?: boolean}} args parsed command line, for its overrides
 * @param {(line: string) => void} warn told of values taken as SVR.JS took
 *   them and of settings that weaken security, "<file>: <pointer>: <what>"
 * @returns {Promise<object>} the runtime options, without mods
 * @throws {Error} the first refusal, with `refused`: 'configuration' or
 *   'certificates', for a message that says what stays in use
 */
async function readOptions (base, args, warn) {
  const { configFile } = base
  let config
  let proxyCa
  try {
    const loaded = await loadConfig(configFile, {
      installDir: base.installDir,
      warn: (line) => warn(configFile + ': ' + line),
      extraKeys: modKeysHook(base)
    })
    config = withOverrides(loaded, args)
    await checkWebroot(configFile, config)
    await checkAcme(configFile, config)
    proxyCa = await readProxyCa(configFile, config)
    // Checked here; the primary reads them again to connect (lib/store/).
    await readStoreSecrets(configFile, config)
  } catch (err) {
    throw refusedAt(err, 'configuration')
  }
  let tls = null
  try {
    if (config.secure) tls = await readTlsMaterial(config, base.ticketKeys)
  } catch (err) {
    throw refusedAt(err, 'certificates')
  }
  return { ...base, config, tls, proxyCa, mods: [] }
}

function refusedAt (err, what) {
  err.refused = what
  return err
}

module.exports = { readOptions, loadConfig, withOverrides }
