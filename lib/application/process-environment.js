'use strict'

const path = require('node:path')
const Module = require('node:module')

/**
 * The NODE_PATH under which application code (serverSideScript.js, mods and
 * whatever they require) finds svr's own packages (`mime-types`, `send`, …)
 * when its own node_modules lookup does not: SVR.JS 3.x code resolved them
 * from the server's install directory, which was also its server root.
 * Directories the operator put in NODE_PATH come first.
 * @param {string|undefined} current the NODE_PATH in effect
 * @returns {string}
 */
function applicationNodePath (current) {
  const given = current ? current.split(path.delimiter).filter(Boolean) : []
  const own = module.paths.filter((dir) => !given.includes(dir))
  return given.concat(own).join(path.delimiter)
}

/**
 * Environment for a cluster worker: Node reads NODE_PATH when it starts.
 * @param {object} env variables given to the worker
 * @returns {object} env with NODE_PATH set
 */
function workerEnvironment (env) {
  return { ...env, NODE_PATH: applicationNodePath(env.NODE_PATH !== undefined ? env.NODE_PATH : process.env.NODE_PATH) }
}

/**
 * The same lookup for the process itself (`--single-threaded`, where no
 * worker is forked). Node reads NODE_PATH only at start; `_initPaths` is
 * the long-stable, widely relied-on internal that reads it again.
 */
function useApplicationNodePath () {
  process.env.NODE_PATH = applicationNodePath(process.env.NODE_PATH)
  if (typeof Module._initPaths === 'function') Module._initPaths()
}

/**
 * Make the webroot the working directory of the process that runs the
 * application code, as SVR.JS 3.x did: scripts read `data/list.json` and
 * require `process.cwd() + "/helper.js"`. svr's own file handling uses
 * absolute paths only.
 * @param {{wwwroot: string}} config
 * @throws {Error} when the webroot cannot be entered
 */
function enterWebroot (config) {
  process.chdir(config.wwwroot)
}

module.exports = { applicationNodePath, workerEnvironment, useApplicationNodePath, enterWebroot }
