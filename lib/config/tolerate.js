'use strict'

const { DESCRIPTIONS } = require('../error-pages/descriptions')

const DIGITS = /^\d{3}$/
// nonStandardCodes statuses that are not answered with an error page.
const NOT_PAGES = new Set([301, 302, 307, 308, 401])

/**
 * Values SVR.JS 3.x accepted although they are not of the documented type,
 * and that real 3.x configurations contain. Each is turned into what SVR.JS
 * made of it, before validation, with one warning naming its JSON pointer.
 * Runs on the freshly parsed file, which nothing else holds yet.
 * @param {unknown} data the parsed configuration
 * @returns {string[]} warnings: "<JSON pointer>: <what was done>"
 */
function tolerateLegacyValues (data) {
  const warnings = []
  if (!isObject(data)) return warnings
  stringifyHeaderValues(data.customHeaders, '/customHeaders', warnings)
  if (Array.isArray(data.customHeadersVHost)) {
    data.customHeadersVHost.forEach((entry, i) => {
      if (isObject(entry)) stringifyHeaderValues(entry.headers, '/customHeadersVHost/' + i + '/headers', warnings)
    })
  }
  for (const key of ['nonStandardCodes', 'errorPages']) {
    if (!Array.isArray(data[key])) continue
    data[key].forEach((entry, i) => numberStatus(entry, '/' + key + '/' + i + '/scode', warnings))
  }
  return warnings
}

// SVR.JS passed header values to setHeader, which sends a number as its digits.
function stringifyHeaderValues (headers, pointer, warnings) {
  if (!isObject(headers)) return
  for (const name of Object.keys(headers)) {
    const value = headers[name]
    if (typeof value !== 'number' || !Number.isFinite(value)) continue
    headers[name] = String(value)
    warnings.push(pointer + '/' + escapePointer(name) + ': the number ' + value + ' is sent as the header value "' +
      headers[name] + '", as SVR.JS did; write it as a string')
  }
}

// SVR.JS compared and answered statuses loosely, so "403" worked as 403.
function numberStatus (entry, pointer, warnings) {
  if (!isObject(entry) || typeof entry.scode !== 'string' || !DIGITS.test(entry.scode)) return
  entry.scode = Number(entry.scode)
  warnings.push(pointer + ': the string "' + entry.scode + '" is taken as the status ' + entry.scode +
    ', as SVR.JS did; write it as a number')
}

/**
 * Warnings about a valid configuration that behaves as it did under SVR.JS
 * but probably not as its author meant.
 * @param {object} config validated, defaults filled in
 * @returns {string[]}
 */
function legacyBehaviourWarnings (config) {
  const warnings = []
  config.nonStandardCodes.forEach((entry, i) => {
    if (NOT_PAGES.has(entry.scode) || DESCRIPTIONS[entry.scode] !== undefined) return
    warnings.push('/nonStandardCodes/' + i + '/scode: ' + entry.scode +
      ' has no error page of its own; it is answered with 501 Not Implemented, as SVR.JS did')
  })
  config.errorPages.forEach((entry, i) => {
    if (DESCRIPTIONS[entry.scode] !== undefined) return
    warnings.push('/errorPages/' + i + '/scode: ' + entry.scode +
      ' is never answered (a status without a description is answered with 501), so this page is never used')
  })
  return warnings
}

// RFC 6901: "~" and "/" in a key are escaped in a JSON pointer.
function escapePointer (key) {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

function isObject (value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

module.exports = { tolerateLegacyValues, legacyBehaviourWarnings }
