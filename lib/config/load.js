'use strict'

const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const Ajv = require('ajv')
const { svrError, readFailure } = require('../errors')
const { parseListenSpec } = require('../listen')
const { parseRegexString } = require('../util/regex')
const { upstreamProblem } = require('../proxy/upstream-url')
const { servernameProblem, proxyTlsWarnings } = require('../proxy/upstream-tls')
const { deepFreeze } = require('../util/deep-freeze')
const { tolerateLegacyValues, legacyBehaviourWarnings } = require('./tolerate')
const { acmeProblems, acmeNames } = require('../acme/names')
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
const HOST_PORT_LIKE = /^(\[[^\]]*\]|[^/\\:[\]]+):(\d+)$/
const CIDR_BITS = /^\d{1,3}$/
// Keywords whose own message is a bare regex or schema detail; a schema
// object can replace it with a sentence through "x-svr-message".
const MESSAGE_KEYWORDS = new Set(['anyOf', 'const', 'enum', 'oneOf', 'pattern'])

const validate = createValidator()
// Shared with the docs generator and tests; nobody may change it after compiling.
deepFreeze(schema)

function createValidator () {
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
    stringKeyword('svrListen', listenProblem),
    stringKeyword('svrAddress', addressProblem),
    stringKeyword('svrUpstream', upstreamProblem),
    stringKeyword('svrServername', servernameProblem)
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

// Mirrors lib/listen.js: what it would take as a port must be in range, and
// what it would take as a socket path must not be a mistyped address.
function listenProblem (value) {
  const forms = 'must be a port, "ip:port", "[v6]:port" or a socket path'
  if (value === '') return forms + ', not empty'
  const spec = parseListenSpec(value)
  if (spec.path === undefined) return spec.port <= 65535 ? null : 'port ' + spec.port + ' is out of range (0-65535)'
  if (!value.includes('/') && net.isIP(value) !== 0) return 'an IP address needs a port: "ip:port" or "[v6]:port"'
  const match = HOST_PORT_LIKE.exec(value)
  if (match === null) return null
  const host = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1]
  if (net.isIP(host) === 0) return forms + ': ' + JSON.stringify(host) + ' is not an IP address (host names are not resolved)'
  if (Number(match[2]) > 65535) return 'port ' + match[2] + ' is out of range (0-65535)'
  return forms + ': write IPv4 as "ip:port" and IPv6 as "[v6]:port", without a zone'
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
async function loadConfig (file, { installDir = INSTALL_DIR, warn = ignore, extraKeys = null } = {}) {
  const text = await readConfigText(file)
  const data = parseConfigText(file, text)
  for (const line of tolerateLegacyValues(data)) warn(line)
  const given = isObject(data) ? new Set(Object.keys(data)) : new Set()
  const extra = takeExtraKeys(data)
  const problems = validate(data) ? [] : formatProblems(validate.errors)
  if (isObject(data)) problems.push(...semanticProblems(data))
  const declared = await judgeExtraKeys(extra, data, extraKeys, warn)
  // Top-level keys first, where the schema's own check named unknown ones.
  problems.unshift(...declared.problems)
  if (problems.length > 0) throw invalidConfig(file, problems)
  for (const line of legacyBehaviourWarnings(data)) warn(line)
  for (const line of proxyTlsWarnings(data)) warn(line)
  const config = finish(data, given, path.dirname(path.resolve(file)), installDir)
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

/**
 * @param {string} file
 * @param {string[]} problems "<JSON pointer>: <message>" lines
 * @returns {SvrError} SVR_ERR_CONFIG_INVALID
 */
function invalidConfig (file, problems) {
  const err = svrError('SVR_ERR_CONFIG_INVALID', [file])
  err.file = file
  err.problems = problems
  return err
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
function semanticProblems (data) {
  const min = TLS_ORDER.indexOf(data.tlsMinVersion)
  const max = TLS_ORDER.indexOf(data.tlsMaxVersion)
  const problems = []
  if (min !== -1 && max !== -1 && min > max) {
    problems.push('/tlsMinVersion: must not be newer than tlsMaxVersion (' + data.tlsMinVersion + ' > ' + data.tlsMaxVersion + ')')
  }
  problems.push(...acmeProblems(data))
  return problems
}

function finish (config, given, configDir, installDir) {
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
  resolveAcme(config, configDir)
  for (const route of config.proxy) resolveProxyCa(route.tls, configDir)
  config.port = resolveSocketPath(config.port, configDir)
  config.sport = resolveSocketPath(config.sport, configDir)
  return config
}

// The loaded configuration holds the names to certify, the absolute storage
// directory and CA bundle, so no reader has to work them out again.
function resolveAcme (config, configDir) {
  const { acme } = config
  acme.names = acmeNames(config)
  if (acme.storageDirectory !== null) acme.storageDirectory = path.resolve(configDir, acme.storageDirectory)
  else if (config.stateDirectory !== null) acme.storageDirectory = path.resolve(configDir, config.stateDirectory, 'acme')
  if (acme.caBundle !== null) acme.caBundle = path.resolve(configDir, acme.caBundle)
}

// A route's CA file, or each of its list, as an absolute path.
function resolveProxyCa (tls, configDir) {
  if (typeof tls.ca === 'string') tls.ca = path.resolve(configDir, tls.ca)
  else if (Array.isArray(tls.ca)) tls.ca = tls.ca.map((file) => path.resolve(configDir, file))
}

function resolveSocketPath (value, configDir) {
  if (typeof value !== 'string' || parseListenSpec(value).path === undefined) return value
  return path.resolve(configDir, value)
}

/**
 * Turn ajv errors into one line per real problem: "<JSON pointer>: <message>".
 * Unknown keys are named, enum/type/range rules say what is allowed, and the
 * branch-by-branch noise of a failed anyOf/oneOf becomes a single line.
 * @param {object[]} errors ajv errors (the validator runs with verbose: true)
 * @returns {string[]}
 */
function formatProblems (errors) {
  const composites = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
  const lines = []
  for (const error of errors) {
    // "if" and "propertyNames" only restate errors reported on their own
    if (error.keyword === 'if' || error.keyword === 'propertyNames') continue
    if (composites.some((c) => isBranchError(error, c))) continue
    const subject = error.propertyName !== undefined ? ': invalid key ' + JSON.stringify(error.propertyName) : ''
    const line = (error.instancePath || '/') + subject + ': ' + describeError(error)
    if (!lines.includes(line)) lines.push(line)
  }
  return lines
}

function isBranchError (error, composite) {
  return error !== composite &&
    error.schemaPath.startsWith(composite.schemaPath + '/') &&
    error.instancePath.startsWith(composite.instancePath)
}

function describeError (error) {
  const { keyword, params, parentSchema } = error
  if (MESSAGE_KEYWORDS.has(keyword) && parentSchema && parentSchema['x-svr-message'] !== undefined) {
    return parentSchema['x-svr-message']
  }
  switch (keyword) {
    case 'additionalProperties':
      return 'unknown key ' + JSON.stringify(params.additionalProperty) +
        suggestion(params.additionalProperty, Object.keys(parentSchema.properties || {}))
    case 'required':
      return 'missing required key ' + JSON.stringify(params.missingProperty)
    case 'type':
      return 'must be ' + listOr(String(params.type).split(',')) + ' (got ' + typeName(error.data) + ')'
    case 'enum':
      return 'must be one of ' + params.allowedValues.join(', ')
    case 'const':
      return 'must be ' + JSON.stringify(params.allowedValue)
    case 'anyOf':
    case 'oneOf':
      return 'must match one of the allowed forms'
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return error.message + ' (got ' + error.data + ')'
    default:
      return error.message
  }
}

function listOr (words) {
  return words.length < 2 ? words.join('') : words.slice(0, -1).join(', ') + ' or ' + words[words.length - 1]
}

function typeName (value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function suggestion (key, known) {
  let best = null
  let bestDistance = 3
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, candidate)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best === null ? '' : ' (did you mean ' + JSON.stringify(best) + '?)'
}

// Levenshtein distance; keys are short, so the quadratic table is fine.
function editDistance (a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    }
    previous = current
  }
  return previous[b.length]
}

function isObject (value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

module.exports = { loadConfig, invalidConfig, formatProblems, schema }
