'use strict'

const { loadFreshModule } = require('./fresh-module')

/**
 * A serverSideScript.js of the module form: a CommonJS module exporting
 * `async (req, res, next) => {}`.
 * @param {string} file real path of the script
 * @returns {{name: string, invoke: (req, res, ctx, next) => unknown}}
 */
function createModuleScriptLink (file) {
  // A new module instance: a reload's worker may run in the same process.
  const handler = loadFreshModule(file)
  if (typeof handler !== 'function') {
    throw new TypeError('module.exports must be a function (req, res, next), got ' + typeof handler)
  }
  function invoke (req, res, ctx, next) {
    return handler(req, res, next)
  }
  return { name: 'serverSideScript.js', invoke }
}

module.exports = { createModuleScriptLink }
