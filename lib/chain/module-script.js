'use strict'

/**
 * A serverSideScript.js of the module form: a CommonJS module exporting
 * `async (req, res, next) => {}`.
 * @param {string} file real path of the script
 * @returns {{name: string, invoke: (req, res, ctx, next) => unknown}}
 */
function createModuleScriptLink (file) {
  // A reload forks fresh workers, so the cache only matters when the same
  // process loads the file twice (tests, single-threaded reload).
  delete require.cache[file]
  const handler = require(file)
  if (typeof handler !== 'function') {
    throw new TypeError('module.exports must be a function (req, res, next), got ' + typeof handler)
  }
  function invoke (req, res, ctx, next) {
    return handler(req, res, next)
  }
  return { name: 'serverSideScript.js', invoke }
}

module.exports = { createModuleScriptLink }
