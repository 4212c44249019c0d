#!/usr/bin/env node
'use strict'

/**
 * Writes docs/config.md from lib/config/schema.json, so the reference can
 * never drift from what the loader enforces. `--check` only compares and
 * exits 1 when the committed file is stale (for CI and the test suite).
 */

const fs = require('node:fs')
const path = require('node:path')
const schema = require('../lib/config/schema.json')

const DOCS_FILE = path.resolve(__dirname, '..', 'docs', 'config.md')
// Defaults longer than this get a code block instead of inline code.
const INLINE_DEFAULT_MAX = 60
const KIND_LABELS = { new: 'new in svr', changed: 'changed', ignored: 'ignored' }

const INTRO = `# Configuration reference

<!-- Generated from lib/config/schema.json by scripts/gen-config-docs.js. Do not edit by hand:
     change the schema and run \`npm run docs:config\`. -->

svr reads one JSON file: \`config.json\` beside \`svr.js\`, or the file named by \`--config PATH\`. An SVR.JS 3.x
\`config.json\` loads unchanged; where svr behaves differently the key says so under "Differs from SVR.JS".

- **Every problem stops the start.** Unknown keys (a typo such as \`domainn\`), wrong types, values out of
  range and invalid regular expressions are errors. All of them are reported at once, each with the JSON
  pointer of the offending value, e.g. \`config.json: /rewriteMap/0/definingRegex: invalid regex ...\`.
  \`svr --check-config\` (\`node svr.js --check-config [--config PATH]\`) validates a file without starting the
  server and exits 0 or 1. A reload (SIGHUP) with an invalid file keeps the old configuration.
- **Defaults live in the schema.** A missing key takes the default listed here; nothing else fills in values.
- **Relative paths** in \`wwwroot\`, \`cert\`, \`key\`, the \`sni\` files, the proxy routes' \`tls.ca\` files and unix
  socket paths in \`port\`/\`sport\` resolve against the directory of the configuration file. When \`wwwroot\` is absent the webroot is \`webroot/\`
  beside \`svr.js\`. \`page404\` and \`errorPages\` paths are relative to the webroot.
- **Regex strings** are written \`"/pattern/flags"\` as in SVR.JS, with \`/\` inside the pattern escaped as \`\\/\`
  (JSON doubles every backslash: \`"/^\\\\/docs\\\\//"\` matches paths starting with \`/docs/\`). They are compiled once,
  when the configuration is loaded.
- **Ignored keys** are accepted so that SVR.JS files keep loading, and left out of the loaded configuration.
- svr never writes the configuration file.
`

/**
 * @param {object} configSchema the parsed lib/config/schema.json
 * @returns {string} the Markdown text of docs/config.md
 */
function renderConfigDocs (configSchema) {
  const properties = configSchema.properties
  const groups = new Map()
  for (const [key, property] of Object.entries(properties)) {
    const group = property['x-svr-group'] || 'Other'
    if (!groups.has(group)) groups.set(group, [])
    groups.get(group).push(key)
  }
  const out = [INTRO]
  out.push('## Contents\n')
  for (const [group, keys] of groups) {
    out.push('- ' + group + ': ' + keys.map((key) => '[`' + key + '`](#' + key.toLowerCase() + ')').join(', '))
  }
  out.push('')
  out.push(renderDifferences(properties))
  for (const [group, keys] of groups) {
    out.push('## ' + group + '\n')
    for (const key of keys) out.push(renderKey(key, properties[key]))
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n'
}

function renderDifferences (properties) {
  const rows = Object.entries(properties).filter(([, property]) => property['x-svr'] !== undefined)
  const lines = ['## Differences from SVR.JS at a glance\n', '| Key | Kind | Why |', '|---|---|---|']
  for (const [key, property] of rows) {
    lines.push('| [`' + key + '`](#' + key.toLowerCase() + ') | ' + KIND_LABELS[property['x-svr']] + ' | ' +
      cell(property['x-svr-note']) + ' |')
  }
  return lines.join('\n') + '\n'
}

function renderKey (key, property) {
  const lines = ['### `' + key + '`\n']
  lines.push('- Type: ' + typeOf(property))
  lines.push('- Default:' + renderDefault(property.default))
  if (property['x-svr'] !== undefined) {
    lines.push('- Differs from SVR.JS (' + KIND_LABELS[property['x-svr']] + '): ' + property['x-svr-note'])
  }
  lines.push('')
  lines.push(property.description + '\n')
  lines.push(renderFields(property, key))
  return lines.join('\n')
}

function renderDefault (value) {
  const inline = JSON.stringify(value)
  if (inline.length <= INLINE_DEFAULT_MAX) return ' `' + inline + '`'
  return '\n\n  ```json\n' + JSON.stringify(value, null, 2).replace(/^/gm, '  ') + '\n  ```'
}

// Tables for the fields of nested objects: array entries, map values and
// plain sub-objects, recursively.
function renderFields (property, name) {
  const target = nestedObject(property)
  if (target === null) return ''
  const out = [target.label.replace('%s', '`' + name + '`') + ':\n', '| Field | Type | Required | Description |', '|---|---|---|---|']
  const required = new Set(target.schema.required || [])
  const nested = []
  for (const [field, fieldSchema] of Object.entries(target.schema.properties)) {
    const def = fieldSchema.default !== undefined ? ' Default: `' + JSON.stringify(fieldSchema.default) + '`.' : ''
    out.push('| `' + field + '` | ' + cell(typeOf(fieldSchema)) + ' | ' + (required.has(field) ? 'yes' : 'no') + ' | ' +
      cell(fieldSchema.description + def) + ' |')
    if (nestedObject(fieldSchema) !== null) nested.push([field, fieldSchema])
  }
  const rule = requirementNote(target.schema)
  if (rule !== '') out.push('\n' + rule)
  out.push('')
  for (const [field, fieldSchema] of nested) out.push(renderFields(fieldSchema, field))
  return out.join('\n')
}

function nestedObject (schema) {
  if (schema.type === 'object' && schema.properties) return { label: 'Fields of %s', schema }
  if (schema.type === 'array' && schema.items && schema.items.properties) return { label: 'Fields of each %s entry', schema: schema.items }
  const value = schema.additionalProperties
  if (schema.type === 'object' && value && value.properties) return { label: 'Fields of each %s value', schema: value }
  return null
}

function requirementNote (schema) {
  const notes = []
  if (schema.anyOf) {
    const alternatives = schema.anyOf.map((branch) => branch.required.map((field) => '`' + field + '`').join(' and '))
    notes.push('At least one of ' + alternatives.join(' or ') + ' is required.')
  }
  if (schema.if && schema.then && schema.then.required) {
    const [field, condition] = Object.entries(schema.if.properties)[0]
    notes.push('`' + schema.then.required.join('`, `') + '` is required when `' + field + '` is ' +
      listOr(condition.enum.map(String)) + '.')
  }
  return notes.join(' ')
}

function listOr (words) {
  return words.length < 2 ? words.join('') : words.slice(0, -1).join(', ') + ' or ' + words[words.length - 1]
}

function typeOf (schema) {
  if (schema.anyOf && schema.type === undefined) return schema.anyOf.map(typeOf).join(' | ')
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ')
  if (schema.svrRegex) return 'regex string'
  if (schema.svrAddress) return 'IP address or CIDR string'
  const types = [].concat(schema.type)
  const parts = types.map((type) => {
    if (type === 'array' && schema.items) return 'array of ' + plural(typeOf(schema.items), schema.items)
    if (type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      return 'object (name → ' + typeOf(schema.additionalProperties) + ')'
    }
    return type
  })
  return parts.join(' | ')
}

function plural (type, items) {
  if (items.properties) return 'objects'
  return type.replace(/\b(string|integer|boolean|number|object)\b/g, '$1s')
}

// Markdown table cells end at "|" and at line breaks.
function cell (text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

/**
 * @param {string[]} argv command-line arguments; `--check` compares instead of writing
 * @param {string} [file] the Markdown file (docs/config.md)
 * @returns {number} exit code: 1 when `--check` finds the file out of date
 */
function main (argv, file = DOCS_FILE) {
  const text = renderConfigDocs(schema)
  const name = path.relative(process.cwd(), file)
  if (argv.includes('--check')) {
    let current = null
    try {
      current = fs.readFileSync(file, 'utf8')
    } catch (err) {
      if (err.code !== 'ENOENT') throw err
    }
    if (current === text) return 0
    process.stderr.write(name + ' is out of date: run npm run docs:config\n')
    return 1
  }
  fs.writeFileSync(file, text)
  process.stdout.write('wrote ' + name + '\n')
  return 0
}

if (require.main === module) process.exitCode = main(process.argv.slice(2))

module.exports = { renderConfigDocs, main, DOCS_FILE }
