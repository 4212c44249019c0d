'use strict'

const { message, dispatch } = require('../../ipc')
const { loadModernMod, modernModInfo } = require('../modern-mod')
const { describeLoadError } = require('../compile')

/**
 * What SVR.JS 4.x mods declare, read in a short-lived child process of the
 * primary (lib/application/mods/declarations.js forks this file): `configValidators`,
 * configuration keys of their own, each with a function that says whether
 * a value is acceptable. (Their `commands` the primary learns from the
 * workers, which run them.) Reading them means running the
 * mod's file, and mod code never runs in the primary itself: what a mod
 * does at load time (timers, connections, a loop that never ends) stays in
 * this process, which exits once it has answered, or is killed.
 */
function runProbe () {
  const table = { 'read-declarations': (msg) => readDeclarations(msg.files, msg.values, msg.ownKeys) }
  process.once('message', (msg) => dispatch(table, msg))
}

/**
 * @param {string[]} files the 4.x mods, in chain order
 * @param {object} values the configuration's keys that svr's schema does not know
 * @param {string[]} ownKeys the keys of svr's schema
 */
function readDeclarations (files, values, ownKeys) {
  const own = new Set(ownKeys)
  const mods = []
  for (const file of files) {
    // Named before it runs: a file that never finishes loading is named by the primary's timeout.
    process.send(message('mod-loading', { file }))
    let mod
    try {
      mod = loadModernMod(file)
    } catch (err) {
      answer({ failure: { file, reason: describeLoadError(err, file) } })
      return
    }
    mods.push(declarationsOf(file, mod, values, own))
  }
  answer({ mods })
}

/**
 * @returns {{file: string, name: string, keys: string[], ownKeys: string[],
 *   refusals: Object<string, string>}} `keys`: the keys it
 *   declares that svr's schema does not have; `ownKeys`: those it declares
 *   that svr's schema checks already; `refusals`: key -> why its validator
 *   refused the configured value
 */
function declarationsOf (file, mod, values, own) {
  const validators = mod.configValidators !== null && typeof mod.configValidators === 'object' ? mod.configValidators : {}
  const declaration = { file, name: modernModInfo(mod).name, keys: [], ownKeys: [], refusals: {} }
  for (const key of Object.keys(validators)) {
    if (typeof validators[key] !== 'function') continue
    if (own.has(key)) {
      declaration.ownKeys.push(key)
      continue
    }
    declaration.keys.push(key)
    if (!Object.hasOwn(values, key)) continue
    const refusal = judge(validators[key], values[key])
    if (refusal !== null) declaration.refusals[key] = refusal
  }
  return declaration
}

// SVR.JS 4.x takes a falsy answer as a refusal; a validator that throws
// refuses too, with its message.
function judge (validator, value) {
  try {
    return validator(value) ? null : 'invalid value'
  } catch (err) {
    return 'invalid value (the validator threw ' + (err instanceof Error ? err.name + ': ' + err.message : String(err)) + ')'
  }
}

// Exits once the answer is out, whatever timers or sockets the mods left.
function answer (result) {
  process.send(message('mod-declarations', result), () => process.exit(0))
}

if (require.main === module) runProbe()

module.exports = { declarationsOf, judge }
