'use strict'

const vm = require('node:vm')
const path = require('node:path')
const { createRequire } = require('node:module')
const { LEGACY_NAMES } = require('./api/names')
const { usedNames } = require('./used-names')

// Names a serverSideScript.js of the SVR.JS form sees besides the 22
// positional ones: SVR.JS declared these inside the script's function.
const HELPER_NAMES = ['filterHeaders', 'checkHostname', 'checkHref']
// The file becomes the body of a function, as in SVR.JS: top-level
// statements run per request and a top-level `return` ends the handler.
// `disableEndElseCallbackExecute` is a parameter, so both plain assignment
// and `var` at top level set the same binding. One line is appended after
// the file's last line (line numbers stay exact) to run SVR.JS's epilogue:
// when the body ends without `return`, pass the flag to the runtime, which
// continues the chain unless the script set it.
const FELL_THROUGH = '__svrFellThrough'
// The names whose values the runtime makes for the script.
const SCRIPT_NAMES = [...LEGACY_NAMES, ...HELPER_NAMES]
const PARAMS = [...SCRIPT_NAMES, 'disableEndElseCallbackExecute', FELL_THROUGH]
const EPILOGUE = '\n;' + FELL_THROUGH + '(disableEndElseCallbackExecute)\n'
const MODULES = ['os', 'http', 'url', 'fs', 'path', 'crypto', 'https', 'stream', 'readline']
const COMMONJS_PARAMS = ['exports', 'require', 'module', '__filename', '__dirname']

// Persist across requests, as SVR.JS declared them outside the script's function.
const PERSISTENT_NAMES = ['customvar1', 'customvar2', 'customvar3', 'customvar4']
const FACTORY_PARAMS = ['require', '__filename', '__dirname', ...MODULES]
// The script's function is made by an outer one that declares the
// persistent names, so that every name resolves statically: a scope object
// consulted like a `with` block (vm contextExtensions) made each global
// lookup (Math, JSON) dynamic and halved the speed of CPU-bound scripts.
// All on the first line, with columnOffset undoing it, so that line and
// column numbers stay those of the file.
const PREFIX = 'var ' + PERSISTENT_NAMES.join(', ') + '; return function (' + PARAMS.join(', ') + ') {'
const SUFFIX = '}'

/**
 * Compile a serverSideScript.js of the SVR.JS form once.
 * @param {string} source the file's text
 * @param {string} file its real path: names it in stack traces
 * @param {{filename: string, dirname: string, require: Function}} [env] the
 *   `__filename`, `__dirname` and `require` the script sees
 *   (lib/application/script-environment.js); by default those of `file`
 * @returns {{run: Function, uses: Set<string>}} `run` takes PARAMS in order;
 *   customvar1…4 keep their values from one request to the next; `uses`,
 *   which of SCRIPT_NAMES the script can see (lib/application/used-names.js)
 */
function compileLegacyScript (source, file, env = ownEnvironment(file)) {
  const body = withoutShebang(source)
  try {
    // Parsed alone first: its syntax errors are reported as they are in
    // the file, and a stray brace cannot close the wrapper early.
    vm.compileFunction(body + EPILOGUE, PARAMS, { filename: file })
  } catch (err) {
    throw betterSyntaxError(err, body, file)
  }
  const factory = vm.compileFunction(PREFIX + body + EPILOGUE + SUFFIX, FACTORY_PARAMS, {
    filename: file,
    columnOffset: -PREFIX.length
  })
  const modules = MODULES.map((name) => require('node:' + name))
  const run = factory(env.require, env.filename, env.dirname, ...modules)
  return { run, uses: usedNames(body, SCRIPT_NAMES) }
}

function ownEnvironment (file) {
  return { filename: file, dirname: path.dirname(file), require: createRequire(file) }
}

// An unfinished construct at the end of the file is reported on the
// epilogue line, past the file's end; parsed alone, the file gives the
// location the author needs.
function betterSyntaxError (err, body, file) {
  if (!(err instanceof SyntaxError)) return err
  try {
    vm.compileFunction(body, PARAMS, { filename: file })
  } catch (plain) {
    return plain
  }
  return err
}

/**
 * Parse a script without running it, so the primary can refuse a broken
 * one before any worker is forked or replaced.
 * @param {string} source
 * @param {string} file
 * @param {'svrjs'|'module'} format
 */
function checkSyntax (source, file, format) {
  const body = withoutShebang(source)
  if (format === 'module') vm.compileFunction(body, COMMONJS_PARAMS, { filename: file })
  else compileLegacyScript(body, file)
}

// A `#!` line is legal at the top of a script file but not of a function body.
function withoutShebang (source) {
  return source.startsWith('#!') ? '//' + source.slice(2) : source
}

/**
 * One line naming where a load error happened: `file:line: SyntaxError: …`.
 * @param {Error} err
 * @param {string} file
 * @returns {string}
 */
function describeLoadError (err, file) {
  const where = locate(err, file)
  return (where === null ? file : where) + ': ' + (err.name || 'Error') + ': ' + err.message
}

function locate (err, file) {
  const stack = typeof err.stack === 'string' ? err.stack : ''
  // V8 puts "file:line" on the first line of a SyntaxError's stack.
  const first = stack.slice(0, stack.indexOf('\n'))
  if (first.startsWith(file + ':')) return first
  const at = stack.indexOf(file + ':')
  if (at === -1) return null
  const end = stack.slice(at).search(/[)\s]/)
  return end === -1 ? stack.slice(at) : stack.slice(at, at + end)
}

module.exports = { compileLegacyScript, checkSyntax, describeLoadError, PARAMS, HELPER_NAMES }
