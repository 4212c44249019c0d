'use strict'

// token68 (RFC 9110 §11.2) in base64's alphabet, padding optional.
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * Read `Authorization: Basic <base64(name:password)>` (RFC 7617). The
 * scheme is matched without regard to case; name and password are split at
 * the first colon and decoded as UTF-8, the charset the challenge announces.
 * @param {string|undefined} header
 * @returns {{name: string, password: string} | null} null when absent or malformed
 */
function parseBasicCredentials (header) {
  if (typeof header !== 'string' || header.length < 7) return null
  if (header.charCodeAt(5) !== 32 /* SP */ || header.slice(0, 5).toLowerCase() !== 'basic') return null
  const token = header.slice(6).trim()
  if (!BASE64.test(token)) return null
  const decoded = Buffer.from(token, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon === -1) return null
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

module.exports = { parseBasicCredentials }
