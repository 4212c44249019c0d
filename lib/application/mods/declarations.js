'use strict'

const { fork } = require('node:child_process')
const path = require('node:path')
const { svrError } = require('../../errors')
const { message, dispatch } = require('../../ipc')
const { modernModFiles } = require('./prepare')
const { workerEnvironment } = require('../process-environment')
const schema = require('../../config/schema.json')

// Loading a mod normally takes milliseconds; one that is still loading
// after this long never will.
const PROBE_TIMEOUT_MS = 10000

/**
 * The hook the configuration loader asks about keys its schema does not
 * know (lib/config/load.js `extraKeys`): SVR.JS 4.x mods declare keys of
 * their own with a `configValidators` export, and such a key is accepted
 * when a loaded mod declares it and that mod's validator accepts its value.
 * With --disable-mods no mod code is loaded, so the keys are taken
 * unchecked, with a warning: safe mode must start with the configuration
 * that the mods made necessary.
 * @param {{configFile: string, disableMods: boolean}} where the configuration and whether mods run
 * @returns {(extra: object, config: object, warn: (line: string) => void) => Promise<{owners: Map<string, string[]>,
 *   problems: string[], declared: string[]}>} see judgeKeys
 */
function modKeysHook ({ configFile, disableMods }) {
  return async function checkModKeys (extra, config, warn) {
    const owners = new Map()
    if (disableMods) {
      for (const key of Object.keys(extra)) {
        owners.set(key, [])
        warn('/' + key + ': not checked: mods are disabled, and only a mod can declare this key')
      }
      return { owners, problems: [], declared: [] }
    }
    const files = await modernModFiles({ configFile })
    if (files.length === 0) return { owners, problems: [], declared: [] }
    const declarations = await readModDeclarations(files, extra, config, configFile)
    return judgeKeys(declarations, extra, warn, configFile)
  }
}

/**
 * What the 4.x mods declare, and their validators' verdicts on `values`,
 * from a child process that loads them (lib/application/mods/probe.js).
 * @param {string[]} files the 4.x mods in chain order
 * @param {object} values the keys to judge
 * @param {object} config the rest of the configuration (environmentVariables)
 * @param {string} configFile the child works in its directory, the server root
 * @param {number} [timeout] ms
 * @returns {Promise<object[]>} one declaration per mod (probe.js declarationsOf)
 * @throws {SvrError} SVR_ERR_MOD_LOAD naming the file that failed to load, or never finished
 */
function readModDeclarations (files, values, config, configFile, timeout = PROBE_TIMEOUT_MS) {
  const variables = config.environmentVariables !== null && typeof config.environmentVariables === 'object' ? config.environmentVariables : {}
  const child = fork(path.join(__dirname, 'probe.js'), [], {
    cwd: path.dirname(path.resolve(configFile)),
    env: workerEnvironment({ ...process.env, ...variables }),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return new Promise((resolve, reject) => {
    let loading = files[0]
    let settled = false
    const timer = setTimeout(() => settle(null, loadError(loading, 'still loading after ' + timeout + ' ms')), timeout)
    function settle (value, err) {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      if (err === null) resolve(value)
      else reject(err)
    }
    const table = {
      'mod-loading': (msg) => { loading = msg.file },
      'mod-declarations': (msg) => msg.failure === undefined
        ? settle(msg.mods, null)
        : settle(null, loadError(msg.failure.file, msg.failure.reason))
    }
    child.on('message', (msg) => dispatch(table, msg))
    child.on('error', (err) => settle(null, loadError(loading, 'cannot start the process that reads mods: ' + err.message)))
    child.on('exit', (code, signal) => settle(null, loadError(loading, 'the process that reads mods ended (' + (signal || 'exit code ' + code) + ') while loading it')))
    child.send(message('read-declarations', { files, values, ownKeys: ownSchemaKeys() }))
  })
}

function loadError (file, reason) {
  return svrError('SVR_ERR_MOD_LOAD', [file, reason])
}

function ownSchemaKeys () {
  return Object.keys(schema.properties)
}

/**
 * @param {object[]} declarations from the probe
 * @param {object} extra the keys svr's schema does not know, with their values
 * @param {(line: string) => void} warn
 * @param {string} configFile mods are named relative to its directory
 * @returns {{owners: Map<string, string[]>, problems: string[], declared: string[]}} owners:
 *   key -> the mods that declare it; declared: every key a mod declares (for suggestions)
 */
function judgeKeys (declarations, extra, warn, configFile) {
  const root = path.dirname(path.resolve(configFile))
  const owners = new Map()
  const problems = []
  const declared = new Set()
  for (const mod of declarations) {
    const label = 'mod "' + mod.name + '" (' + path.relative(root, mod.file) + ')'
    for (const key of mod.ownKeys) {
      warn('/' + key + ': ' + label + ' declares a validator for this key, which svr\'s own schema checks; the mod\'s validator is not used')
    }
    for (const key of mod.keys) {
      declared.add(key)
      if (!Object.hasOwn(extra, key)) continue
      if (!owners.has(key)) owners.set(key, [])
      owners.get(key).push(label)
      if (Object.hasOwn(mod.refusals, key)) problems.push('/' + key + ': ' + mod.refusals[key] + ', refused by the validator of ' + label)
    }
  }
  return { owners, problems, declared: [...declared] }
}

module.exports = { modKeysHook, readModDeclarations, judgeKeys, PROBE_TIMEOUT_MS }
