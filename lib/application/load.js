'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { svrError } = require('../errors')
const { describeLoadError } = require('./compile')
const { createLegacyScriptLink } = require('./legacy-script')
const { createModuleScriptLink } = require('./module-script')
const { createLegacyModLink } = require('./legacy-mod')
const { createModernModLink } = require('./modern-mod')
const { scriptPath } = require('./locate')
const { scriptEnvironment } = require('./script-environment')

/**
 * Load the mods (already prepared by the primary) and the script, in chain
 * order. Runs once per worker at boot, so reading the script synchronously
 * here costs nothing per request.
 * @param {object} options runtime options ({mods} from the primary)
 * @param {{legacy: () => object, modern: () => object}} apis lazily built APIs
 * @returns {Array<{name: string, invoke: Function}>}
 * @throws {SvrError} SVR_ERR_MOD_LOAD or SVR_ERR_SCRIPT_LOAD naming file and line
 */
function loadLinks (options, apis) {
  const links = []
  for (const entry of options.mods || []) links.push(loadMod(entry, apis))
  const script = loadScript(options, apis)
  if (script !== null) links.push(script)
  return links
}

function loadMod (entry, apis) {
  try {
    return entry.kind === 'legacy' ? createLegacyModLink(entry, apis.legacy()) : createModernModLink(entry, apis.modern())
  } catch (err) {
    throw svrError('SVR_ERR_MOD_LOAD', [entry.file, describeLoadError(err, entry.kind === 'legacy' ? path.join(entry.dir, 'index.js') : entry.file)], { cause: err })
  }
}

function loadScript (options, apis) {
  const file = scriptPath(options)
  let real
  let source
  try {
    real = fs.realpathSync(file)
    source = options.config.serverSideScriptFormat === 'svrjs' ? fs.readFileSync(real, 'utf8') : null
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw svrError('SVR_ERR_SCRIPT_LOAD', [file, err.message], { cause: err })
  }
  try {
    return source === null
      ? createModuleScriptLink(real)
      : createLegacyScriptLink(source, real, scriptEnvironment(options, real), apis.legacy())
  } catch (err) {
    throw svrError('SVR_ERR_SCRIPT_LOAD', [file, describeLoadError(err, real)], { cause: err })
  }
}

module.exports = { loadLinks }
