'use strict'

// Keywords whose own message is a bare regex or schema detail; a schema
// object can replace it with a sentence through "x-svr-message".
const MESSAGE_KEYWORDS = new Set(['anyOf', 'const', 'enum', 'oneOf', 'pattern'])

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

module.exports = { formatProblems, suggestion }
