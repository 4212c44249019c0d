'use strict'

const FRAME_FLAG = '--experimental-async-context-frame'
// Node 24 keeps async context in frames by default; 22.7 and later can, behind the flag.
const FRAME_DEFAULT_MAJOR = 24

/**
 * The Node options a worker starts with: the primary's own, and on Node
 * 22 the async context kept in frames (the default of Node 24). svr runs
 * every request's application code in an AsyncLocalStorage scope, so that
 * an exception thrown later by one of its callbacks answers that request
 * with a 500 instead of ending the worker. Kept by async hooks, as Node 20
 * and 22 do without the flag, the scope costs every async resource the
 * worker makes (each tick, write and timer) a JavaScript call: about 9,000
 * instructions of a hello request's 140,000 on Node 22, half of that in
 * frames. An operator's own choice (either form of the flag in
 * execArgv or NODE_OPTIONS) is kept.
 * @param {{execArgv?: string[], env?: NodeJS.ProcessEnv, version?: string, allowed?: Set<string>}} [proc]
 *   for tests: the process to read, this one unless told
 * @returns {string[]} the execArgv for cluster.setupPrimary
 */
function workerExecArgv (proc = {}) {
  const execArgv = proc.execArgv || process.execArgv
  const env = proc.env || process.env
  const version = proc.version || process.version
  const allowed = proc.allowed || process.allowedNodeEnvironmentFlags
  const major = Number(version.slice(1, version.indexOf('.')))
  if (major >= FRAME_DEFAULT_MAJOR || !allowed.has(FRAME_FLAG)) return execArgv
  const chosen = [...execArgv, ...String(env.NODE_OPTIONS || '').split(/\s+/)].some((arg) => arg.includes('async-context-frame'))
  return chosen ? execArgv : [...execArgv, FRAME_FLAG]
}

module.exports = { workerExecArgv, FRAME_FLAG }
