'use strict'

const SLASH_RUNS = /\/{2,}/g

/**
 * Every run of slashes as one slash.
 * @param {string} text
 * @returns {string}
 */
function collapseAllSlashes (text) {
  return text.indexOf('//') === -1 ? text : text.replace(SLASH_RUNS, '/')
}

/**
 * The path of a URL with every run of slashes collapsed, the query string
 * left as it is.
 * @param {string} url path and query
 * @returns {string}
 */
function collapseSlashes (url) {
  const query = url.indexOf('?')
  if (query === -1) return collapseAllSlashes(url)
  const path = url.slice(0, query)
  return path.indexOf('//') === -1 ? url : collapseAllSlashes(path) + url.slice(query)
}

module.exports = { collapseSlashes, collapseAllSlashes }
