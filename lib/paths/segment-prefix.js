'use strict'

/**
 * A path prefix matched on a segment boundary, as `proxy` routes and
 * `rateLimits` rules are: "/api" matches /api, /api/ and /api/users but
 * not /apis; "/api/" and "/" match what starts with them.
 * @param {string} prefix
 * @returns {(pathname: string) => boolean}
 */
function segmentPrefix (prefix) {
  if (prefix.endsWith('/')) return (pathname) => pathname.startsWith(prefix)
  return (pathname) => pathname.startsWith(prefix) &&
    (pathname.length === prefix.length || pathname.charCodeAt(prefix.length) === 47 /* / */)
}

module.exports = { segmentPrefix }
