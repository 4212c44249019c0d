'use strict'

const { compileLegacyScript } = require('./compile')

/**
 * A serverSideScript.js of the SVR.JS form as a chain link.
 * @param {string} source
 * @param {string} file real path of the script
 * @param {{filename: string, dirname: string, require: Function}} env what
 *   the script sees as `__filename`, `__dirname` and `require`
 * @param {object} api from createLegacyApi
 * @returns {{name: string, invoke: (req, res, ctx, next) => void}}
 */
function createLegacyScriptLink (source, file, env, api) {
  const { run, uses } = compileLegacyScript(source, file, env)
  const callScript = api.scriptCaller(run, uses)
  function invoke (req, res, ctx, next) {
    // Called when the body ends without `return`: SVR.JS then continues the
    // chain itself unless the script took that over.
    function fellThrough (disabled) {
      if (!disabled) next()
    }
    callScript(req, res, ctx, next, fellThrough)
  }
  return { name: 'serverSideScript.js', invoke }
}

module.exports = { createLegacyScriptLink }
