'use strict'

/**
 * The cookie of a route's "cookie" policy, made once per route.
 * @typedef {object} StickyCookie
 * @property {string} name
 * @property {string} prefix "name=", searched for in Cookie headers
 * @property {string} attributes what follows the value in Set-Cookie
 */

/**
 * @param {{name: string, maxAge: number|null}} settings the route's `cookie`
 * @returns {StickyCookie}
 */
function compileStickyCookie (settings) {
  // Path=/: the route may be one of several on the site, and the client
  // should keep its upstream on all of them. HttpOnly: scripts have no
  // business with it. SameSite=Lax: sent on top-level navigations from
  // elsewhere, as a session cookie would be.
  let attributes = '; Path=/; HttpOnly; SameSite=Lax'
  if (settings.maxAge !== null) attributes += '; Max-Age=' + settings.maxAge
  return { name: settings.name, prefix: settings.name + '=', attributes }
}

/**
 * @param {string|undefined} header the request's Cookie
 * @param {StickyCookie} cookie
 * @returns {string|null} the cookie's value, or null when it was not sent
 */
function stickyValue (header, cookie) {
  if (typeof header !== 'string') return null
  let at = header.indexOf(cookie.prefix)
  while (at !== -1) {
    // A match must start a pair, not end another cookie's name ("xsvr_upstream=").
    if (at === 0 || header.charCodeAt(at - 1) === 32 /* space */ || header.charCodeAt(at - 1) === 59 /* ; */) {
      const start = at + cookie.prefix.length
      const end = header.indexOf(';', start)
      return header.slice(start, end === -1 ? header.length : end).trim()
    }
    at = header.indexOf(cookie.prefix, at + 1)
  }
  return null
}

/**
 * @param {StickyCookie} cookie
 * @param {string} value the member's id
 * @param {boolean} secure whether the client's request came over HTTPS
 * @returns {string} a Set-Cookie value
 */
function stickyCookieHeader (cookie, value, secure) {
  return cookie.prefix + value + cookie.attributes + (secure ? '; Secure' : '')
}

/**
 * Add the cookie to an answer's fields, after any the upstream set.
 * @param {object} fields the response fields for the client
 * @param {StickyCookie} cookie
 * @param {string} value the member's id
 * @param {boolean} secure
 */
function addStickyCookie (fields, cookie, value, secure) {
  const header = stickyCookieHeader(cookie, value, secure)
  const previous = fields['set-cookie']
  fields['set-cookie'] = previous === undefined ? header : [].concat(previous, header)
}

module.exports = { compileStickyCookie, stickyValue, stickyCookieHeader, addStickyCookie }
