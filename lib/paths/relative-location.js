'use strict'

/**
 * A same-origin `Location` for a clean path: a reference starting with `//`
 * (possible with allowDoubleSlashes) is protocol-relative, so a browser
 * would follow it to another host. The leading run of slashes collapses.
 * @param {string} path clean, percent-encoded path starting with `/`
 * @param {string} search query string with its `?`, or ''
 * @returns {string}
 */
function relativeLocation (path, search) {
  let start = 0
  while (path.charCodeAt(start + 1) === 47 /* / */) start++
  return (start === 0 ? path : path.slice(start)) + search
}

module.exports = { relativeLocation }
