'use strict'

const { baseKey } = require('./policy')

/**
 * Which cache keys a purge names. Keys are a base key ("GET host
 * path?query"), then, for an answer with Vary, its variant after a newline:
 * a URL names its base key with every variant, a prefix every key that
 * starts with it.
 * @param {string} base
 * @param {boolean} prefix
 * @returns {(key: string) => boolean}
 */
function keyMatcher (base, prefix) {
  if (prefix) return (key) => key.startsWith(base)
  return (key) => key === base || key.startsWith(base + '\n')
}

/**
 * A purge as the console takes it: one URL, every URL under a prefix
 * (`http://host/path*`), or everything (`all`).
 * @param {string} target as typed
 * @returns {((key: string) => boolean)|null} which cache keys it names; null
 *   for anything else
 */
function purgeMatcher (target) {
  if (target === 'all') return () => true
  const prefix = target.endsWith('*')
  let url
  try {
    url = new URL(prefix ? target.slice(0, -1) : target)
  } catch {
    return null
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
  return keyMatcher(baseKey(url.hostname.toLowerCase(), url.pathname + url.search), prefix)
}

/**
 * A purge as a PURGE request asks it: the URL of its host and target, or,
 * when the target ends in `*`, every URL under what comes before.
 * @param {string} hostname the request's, as the proxy routes key it
 * @param {string} target its path and query, after sanitizing and rewriting
 * @returns {{base: string, prefix: boolean}}
 */
function requestPurge (hostname, target) {
  const prefix = target.endsWith('*')
  return { base: baseKey(hostname, prefix ? target.slice(0, -1) : target), prefix }
}

module.exports = { keyMatcher, purgeMatcher, requestPurge }
