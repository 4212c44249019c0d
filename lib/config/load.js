'use strict'

const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const Ajv = require('ajv')
const { svrError, readFailure, invalidConfig } = require('../errors')
const { parseRegexString } = require('../util/regex')
const { deepFreeze } = require('../util/deep-freeze')
const { tolerateLegacyValues, legacyBehaviourWarnings } = require('./tolerate')
const { formatProblems, suggestion } = require('./problems')
const schema = require('./schema.json')

// lib/config/load.js lives two levels below the install directory.
const INSTALL_DIR = path.resolve(__dirname, '..', '..')

// Keys svr accepts for SVR.JS compatibility but has no use for; they are
// left out of the loaded configuration so nothing starts depending on them.
const DROPPED_KEYS = Object.keys(schema.properties)
  .filter((key) => schema.properties[key]['x-svr'] === 'ignored')
  .concat('domian')

const TLS_ORDER = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']
const JSON_POSITION = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/
const CIDR_BITS = /^\d{1,3}$/

// Shared with the docs generator and tests; nobody may change it.
deepFreeze(schema)

/**
 * @typedef {object} ConfigFeature what a feature (lib/listen.js,
 *   lib/proxy/config.js, lib/acme/config.js) adds to the loader, which
 *   imports none of them
 * @property {Object<string, (value: string) => string|null>} [keywords] schema
 *   keywords (`"svrUpstream": true` on a string) and the problem of a value, null when none
 * @property {(data: object) => string[]} [problems] checks across keys that
 *   the schema cannot express, "<JSON pointer>: <message>"
 * @property {(config: object) => string[]} [warnings] valid settings worth a
 *   warning (a certificate not verified), "<JSON pointer>: <what>"
 * @property {(config: object, configDir: string) => void} [resolve] fills in
 *   what the feature's readers would otherwise work out again (absolute paths, names)
 */

/**
 * Compile the schema with the features' keywords once; the loader it
 * returns reads a configuration file with every feature's checks.
 * @param {ConfigFeature[]} features
 * @returns {(file: string, options?: object) => Promise<object>} loadConfig
 */
function createConfigLoader (features) {
  const validate = createValidator(features)
  return (file, options) => loadConfig(file, options, validate, features)
}

function createValidator (features) {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    strict: true,
    // port, sport, workers and environment values are legitimately "integer or string"
    allowUnionTypes: true,
    coerceTypes: false,
    // errors then carry parentSchema (for x-svr-message) and data (for "got ...")
    verbose: true
  })
  ajv.addVocabulary([
    { keyword: 'x-svr', metaSchema: { enum: ['new', 'changed', 'ignored'] } },
    { keyword: 'x-svr-note', metaSchema: { type: 'string' } },
    { keyword: 'x-svr-group', metaSchema: { type: 'string' } },
    { keyword: 'x-svr-message', metaSchema: { type: 'string' } },
    stringKeyword('svrRegex', regexProblem),
    stringKeyword('svrAddress', addressProblem),
    ...features.flatMap((feature) => Object.entries(feature.keywords || {}).map(([name, problemOf]) => stringKeyword(name, problemOf)))
  ])
  return ajv.compile(schema)
}

function stringKeyword (keyword, problemOf) {
  function check (enabled, value) {
    const problem = enabled ? problemOf(value) : null
    check.errors = problem === null ? [] : [{ keyword, message: problem, params: {} }]
    return problem === null
  }
  return { keyword, type: 'string', schemaType: 'boolean', errors: true, validate: check }
}

function regexProblem (value) {
  try {
    parseRegexString(value)
    return null
  } catch (err) {
    return err.message
  }
}

function addressProblem (value) {
  if (value === 'localhost') return null
  const slash = value.indexOf('/')
  const family = net.isIP(slash === -1 ? value : value.slice(0, slash))
  if (family === 0) return 'must be an IP address, a CIDR range or "localhost"'
  if (slash === -1) return null
  const bits = value.slice(slash + 1)
  const max = family === 4 ? 32 : 128
  if (!CIDR_BITS.test(bits) || Number(bits) > max) return 'CIDR prefix length must be 0-' + max
  return null
}

/**
 * Read, parse and validate a configuration file, fill in the schema's
 * defaults and resolve its paths. The file is never written.
 * @param {string} file path of config.json
 * @param {{installDir?: string, warn?: (line: string) => void, extraKeys?: Function|null}} [options]
 *   installDir: the directory of svr.js, home of the default webroot
 *   (defaults to this module's install directory); warn: told about every
 *   value taken the way SVR.JS 3.x took it and every setting that weakens
 *   security on purpose (an upstream certificate not verified),
 *   "<JSON pointer>: <what>"; extraKeys: asked about the top-level keys
 *   the schema does not know, `(extra, config, warn) => Promise<{owners:
 *   Map<string, string[]>, problems: string[], declared: string[]}>`
 *   (lib/application/mods/declarations.js: keys that mods declare); a key it names no
 *   owner for is refused as unknown, and without it every such key is
 * @returns {Promise<object>} the configuration, deeply frozen and JSON-serialisable
 * @throws {SvrError} SVR_ERR_CONFIG_READ, SVR_ERR_CONFIG_PARSE, or
 *   SVR_ERR_CONFIG_INVALID with `problems`: one "<JSON pointer>: <message>" line per problem
 */
async function loadConfig (file, { installDir = INSTALL_DIR, warn = ignore, extraKeys = null } = {}, validate, features) {
  const text = await readConfigText(file)
  const data = parseConfigText(file, text)
  for (const line of tolerateLegacyValues(data)) warn(line)
  const given = isObject(data) ? new Set(Object.keys(data)) : new Set()
  const extra = takeExtraKeys(data)
  const problems = validate(data) ? [] : formatProblems(validate.errors)
  if (isObject(data)) problems.push(...semanticProblems(data, features))
  const declared = await judgeExtraKeys(extra, data, extraKeys, warn)
  // Top-level keys first, where the schema's own check named unknown ones.
  problems.unshift(...declared.problems)
  if (problems.length > 0) throw invalidConfig(file, problems)
  for (const line of legacyBehaviourWarnings(data)) warn(line)
  for (const feature of features) for (const line of feature.warnings ? feature.warnings(data) : []) warn(line)
  const config = finish(data, given, path.dirname(path.resolve(file)), installDir, features)
  return deepFreeze(Object.assign(config, declared.accepted))
}

/**
 * Take the top-level keys the schema does not know out of the data, so that
 * the schema judges only its own; what they are is for judgeExtraKeys.
 * @param {unknown} data parsed configuration
 * @returns {object} key -> value
 */
function takeExtraKeys (data) {
  const extra = {}
  if (!isObject(data)) return extra
  for (const key of Object.keys(data)) {
    if (Object.hasOwn(schema.properties, key)) continue
    extra[key] = data[key]
    delete data[key]
  }
  return extra
}

// Keys the schema does not know are accepted only when the extraKeys hook
// names who declares them (a mod), and refused as unknown otherwise, as the
// schema would refuse them: a typo stays an error. The hook is asked even
// when there are none, so that it can load and check what declares keys.
async function judgeExtraKeys (extra, data, extraKeys, warn) {
  const keys = Object.keys(extra)
  const verdict = extraKeys === null ? { owners: new Map(), problems: [], declared: [] } : await extraKeys(extra, data, warn)
  const problems = [...verdict.problems]
  const accepted = {}
  const known = Object.keys(schema.properties).concat(verdict.declared)
  for (const key of keys) {
    if (verdict.owners.has(key)) accepted[key] = extra[key]
    else problems.push('/: unknown key ' + JSON.stringify(key) + suggestion(key, known))
  }
  return { problems, accepted }
}

function ignore () {}

async function readConfigText (file) {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    throw svrError('SVR_ERR_CONFIG_READ', [file, readFailure(err)], { cause: err })
  }
}

function parseConfigText (file, text) {
  // Windows editors like to start UTF-8 files with a byte order mark.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  try {
    return JSON.parse(body)
  } catch (err) {
    const match = JSON_POSITION.exec(err.message)
    const position = match !== null ? Number(match[1]) : /end of JSON input/.test(err.message) ? body.length : -1
    let reason = err.message.replace(JSON_POSITION, '')
    let where = null
    if (position !== -1) {
      where = lineColumn(body, position)
      reason = 'line ' + where.line + ', column ' + where.column + ': ' + reason
    }
    const parseError = svrError('SVR_ERR_CONFIG_PARSE', [file, reason], { cause: err })
    if (where !== null) Object.assign(parseError, where)
    throw parseError
  }
}

function lineColumn (text, position) {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: position - lineStart + 1 }
}

// Checks that span several keys, which JSON Schema cannot express.
function semanticProblems (data, features) {
  const min = TLS_ORDER.indexOf(data.tlsMinVersion)
  const max = TLS_ORDER.indexOf(data.tlsMaxVersion)
  const problems = []
  if (min !== -1 && max !== -1 && min > max) {
    problems.push('/tlsMinVersion: must not be newer than tlsMaxVersion (' + data.tlsMinVersion + ' > ' + data.tlsMaxVersion + ')')
  }
  for (const feature of features) if (feature.problems) problems.push(...feature.problems(data))
  return problems
}

function finish (config, given, configDir, installDir, features) {
  if (given.has('domian') && !given.has('domain')) config.domain = config.domian
  for (const key of DROPPED_KEYS) delete config[key]
  // An absent wwwroot means the webroot shipped beside svr.js, not one beside
  // a config file that may live in /etc.
  config.wwwroot = path.resolve(given.has('wwwroot') ? configDir : installDir, config.wwwroot)
  config.cert = path.resolve(configDir, config.cert)
  config.key = path.resolve(configDir, config.key)
  for (const name of Object.keys(config.sni)) {
    const entry = config.sni[name]
    entry.cert = path.resolve(configDir, entry.cert)
    entry.key = path.resolve(configDir, entry.key)
  }
  for (const feature of features) if (feature.resolve) feature.resolve(config, configDir)
  return config
}

function isObject (value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

module.exports = { createConfigLoader, formatProblems, schema }
