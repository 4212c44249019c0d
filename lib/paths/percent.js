'use strict'

// Percent-encoding of request targets, written as char-code loops without
// regexes: it runs on every request.

/** `%XX` (uppercase) for every byte value. */
const ESCAPE = []
for (let b = 0; b < 256; b++) ESCAPE.push('%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase())

function hexValue (c) {
  if (c >= 48 && c <= 57) return c - 48
  const lower = c | 32
  if (lower >= 97 && lower <= 102) return lower - 87
  return -1
}

/**
 * Code point of the character at `i` (a surrogate pair counts as one),
 * or -1 for a lone surrogate.
 */
function codePointAt (str, i) {
  const c = str.charCodeAt(i)
  if (c < 0xd800 || c > 0xdfff) return c
  const next = str.charCodeAt(i + 1)
  if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) return ((c - 0xd800) << 10) + (next - 0xdc00) + 0x10000
  return -1
}

function utf8Escapes (cp) {
  if (cp < 0x800) return ESCAPE[0xc0 | (cp >> 6)] + ESCAPE[0x80 | (cp & 63)]
  if (cp < 0x10000) {
    return ESCAPE[0xe0 | (cp >> 12)] + ESCAPE[0x80 | ((cp >> 6) & 63)] + ESCAPE[0x80 | (cp & 63)]
  }
  return ESCAPE[0xf0 | (cp >> 18)] + ESCAPE[0x80 | ((cp >> 12) & 63)] +
    ESCAPE[0x80 | ((cp >> 6) & 63)] + ESCAPE[0x80 | (cp & 63)]
}

/**
 * decodeURIComponent without the exception, like `send`'s `decode`.
 * @param {string} pathname percent-encoded path
 * @returns {string|null} the decoded path, or null for a malformed escape or invalid UTF-8
 */
function decodePath (pathname) {
  // Nothing to decode: V8's decodeURIComponent takes hundreds of ns even then.
  if (pathname.indexOf('%') === -1) return pathname
  try {
    return decodeURIComponent(pathname)
  } catch {
    return null
  }
}

function needsByteFix (url, i, c) {
  if (c <= 0x20 || c >= 0x7f) return true
  if (c !== 0x25) return false
  const hi = url.charCodeAt(i + 1)
  const lo = url.charCodeAt(i + 2)
  // Only well-formed escapes with a lowercase digit; malformed ones are the sanitizer's call.
  return hexValue(hi) >= 0 && hexValue(lo) >= 0 && ((hi >= 97 && hi <= 102) || (lo >= 97 && lo <= 102))
}

/**
 * Make a raw request target pure ASCII (pipeline stage 3). Node hands bytes
 * above 0x7F over as latin-1 characters: each becomes `%XX`, so a UTF-8 byte
 * sequence read as latin-1 (`'Ã©'`) turns back into its escapes (`%C3%A9`).
 * Raw spaces and control characters are escaped the same way, and existing
 * escapes are upper-cased as 3.x does, so that a path differing only in hex
 * case is not treated as dirty. Applies to the whole target, query included.
 * Characters above U+00FF (not produced by Node's parser) are UTF-8 encoded;
 * a lone surrogate becomes U+FFFD.
 * @param {string} url request target as found in `req.url`
 * @returns {string} the same string when nothing needed fixing
 */
function fixRawBytes (url) {
  const len = url.length
  let i = 0
  while (i < len && !needsByteFix(url, i, url.charCodeAt(i))) i++
  if (i === len) return url
  let out = url.slice(0, i)
  while (i < len) {
    const c = url.charCodeAt(i)
    if (c <= 0x20 || (c >= 0x7f && c <= 0xff)) {
      out += ESCAPE[c]
      i++
    } else if (c > 0xff) {
      const cp = codePointAt(url, i)
      out += utf8Escapes(cp === -1 ? 0xfffd : cp)
      i += cp > 0xffff ? 2 : 1
    } else if (c === 0x25 && needsByteFix(url, i, c)) {
      out += '%' + url.slice(i + 1, i + 3).toUpperCase()
      i += 3
    } else {
      out += url[i]
      i++
    }
  }
  return out
}

module.exports = { ESCAPE, hexValue, codePointAt, utf8Escapes, decodePath, fixRawBytes }
