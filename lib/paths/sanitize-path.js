'use strict'

// Request-path sanitizer, behaviour-compatible with SVR.JS 3.x `sanitizeURL`
// except where noted. Everything here runs once per request,
// so it is written as table-driven char-code loops without regexes.


// What to do with a character, raw or decoded from an escape.
const DROP = 0 // NUL: removed (3.x step 2)
const CHAR = 1 // kept as a literal character
const SLASH = 2 // segment separator
const BACKSLASH = 3 // separator too, but does not count as the leading `/`
const KEEP = 4 // stays (or becomes) a `%XX` escape
const REJECT = 5 // malformed request
const PERCENT = 6 // raw `%`: starts an escape
const WIDE = 7 // raw non-ASCII: encoded as UTF-8 escapes

// Printable ASCII that must never appear raw in a clean path: the characters 3.x
// meant to re-encode (its regex had a stray `]`, S8), the double quote, and the
// URL delimiters `?` and `#` (a raw one would change meaning in a `Location`).
const UNSAFE = '"<>^`{|}?#'

/** Action for a raw character below 128. */
const RAW = new Uint8Array(128)
/** Action for a byte decoded from `%XX`. */
const DECODED = new Uint8Array(256)

for (let c = 0; c < 256; c++) {
  let action = c >= 0x21 && c <= 0x7e ? CHAR : KEEP
  if (c === 0) action = DROP
  else if (c === 0x2f) action = SLASH
  else if (c === 0x5c) action = BACKSLASH
  else if (c === 0x25 || UNSAFE.includes(String.fromCharCode(c))) action = KEEP
  // Overlong UTF-8 leads and bytes that never occur in UTF-8: 3.x answers 400.
  DECODED[c] = c === 0xc0 || c === 0xc1 || c === 0xfe || c === 0xff ? REJECT : action
  if (c < 128) RAW[c] = c === 0x25 ? PERCENT : action
}

const { ESCAPE, hexValue, codePointAt, utf8Escapes, decodePath } = require('./percent')

// Reused by the slow path; safe because sanitizePath never yields mid-way.
const stack = []

// What pathForm finds: a path sanitizePath would change (or reject); one it
// returns as it is; or one that is also plain, with no escape (decoding
// leaves it as it is), no empty segment and no segment starting with `.`
// (it joins a web root and compares with the forbidden paths as it is).
const NOT_CLEAN = 0
const CLEAN = 1
const PLAIN = 2

/**
 * Whether the path is already in the form sanitizePath would return, and
 * plain, checked cheaply so that ordinary paths skip the rebuilding slow
 * path and the stages after the sanitizer skip their own searches.
 * @param {string} p
 * @param {boolean} allowDoubleSlashes
 * @returns {0|1|2} NOT_CLEAN, CLEAN or PLAIN
 */
function pathForm (p, allowDoubleSlashes) {
  if (p.charCodeAt(0) !== 0x2f) return NOT_CLEAN
  const maxRun = allowDoubleSlashes ? 2 : 1
  let run = 1
  let prev = 0x2f
  let plain = true
  for (let i = 1; i < p.length; i++) {
    const c = p.charCodeAt(i)
    if (c === 0x2f) {
      if (++run > maxRun || prev === 0x2e) return NOT_CLEAN
      if (run === 2) plain = false
    } else {
      if (c >= 128 || RAW[c] !== CHAR) return NOT_CLEAN
      if (c === 0x2e && prev === 0x2f) plain = false
      run = 0
    }
    prev = c
  }
  if (prev === 0x2e) return NOT_CLEAN
  return plain ? PLAIN : CLEAN
}

// seen: null, or an object whose `parent` is set when a `..` segment is resolved.
function sanitizeSlow (p, allowDoubleSlashes, seen) {
  const len = p.length
  stack.length = 0
  let seg = ''
  let dotsOnly = true
  let leading = true // nothing but NULs seen yet: a `/` here is the leading one
  let dirForm = false // output ends with `/`
  let highEscape = false
  let i = 0
  for (;;) {
    const last = i >= len
    if (!last) {
      const c = p.charCodeAt(i)
      let byte = c
      let action
      if (c >= 128) {
        action = WIDE
      } else if (c === 0x25) {
        const hi = hexValue(p.charCodeAt(i + 1))
        const lo = hexValue(p.charCodeAt(i + 2))
        if (hi < 0 || lo < 0) return null
        byte = (hi << 4) | lo
        action = DECODED[byte]
        i += 2
      } else {
        action = RAW[c]
      }
      i++
      if (action === DROP) continue
      if (action === CHAR) {
        seg += String.fromCharCode(byte)
        if (byte !== 0x2e) dotsOnly = false
        leading = false
        continue
      }
      if (action === KEEP) {
        seg += ESCAPE[byte]
        if (byte >= 128) highEscape = true
        dotsOnly = false
        leading = false
        continue
      }
      if (action === WIDE) {
        const cp = codePointAt(p, i - 1)
        if (cp === -1) return null
        if (cp > 0xffff) i++
        seg += utf8Escapes(cp)
        dotsOnly = false
        leading = false
        continue
      }
      if (action === REJECT) return null
      // A separator. 3.x decodes first, then prefixes a missing `/`, then turns
      // `\` into `/`: so a leading `/` or `%2F` is the root, a leading `\` is not.
      if (leading) {
        leading = false
        if (action === SLASH) continue
      }
    }
    if (seg === '') {
      if (last) {
        dirForm = true
      } else if (allowDoubleSlashes && (stack.length === 0 || stack[stack.length - 1] !== '')) {
        // An empty segment stands for `//`; a second one in a row would be `///`.
        stack.push('')
      }
    } else if (dotsOnly) {
      // `.` and three or more dots are no-ops; `..` is the parent.
      if (seg.length === 2) {
        if (seen !== null) seen.parent = true
        if (stack.length !== 0) stack.pop()
      }
      if (last) dirForm = true
    } else {
      // Windows ignores trailing dots, so `name.` must not dodge a deny-list entry for `name`.
      let end = seg.length
      while (seg.charCodeAt(end - 1) === 0x2e) end--
      stack.push(end === seg.length ? seg : seg.slice(0, end))
    }
    if (last) break
    seg = ''
    dotsOnly = true
  }
  // Validating the input rather than the output also refuses a broken sequence
  // that `..` would have removed, as 3.x does when it decodes before sanitizing.
  if (highEscape && decodePath(p) === null) return null
  if (stack.length === 0) return '/'
  const body = '/' + stack.join('/')
  stack.length = 0
  return dirForm ? body + '/' : body
}

/**
 * Normalise a request pathname (never the query) the way SVR.JS 3.x does,
 * with raw `"` `<` `>` `^` `` ` `` `{` `|` `}` `?` `#` escaped (SVR.JS meant
 * to, but a stray `]` in its regex let them through). Call fixRawBytes on the request target first: a raw
 * non-ASCII character here is taken as Unicode and UTF-8 encoded.
 *
 * - `%XX` for printable ASCII other than `"<>^`{|}?#%` is decoded, so `%2e`,
 *   `%2f`, `%5c` take part in the steps below; other escapes stay, upper-cased.
 * - `%00` and NUL are removed; `\` is a `/`.
 * - Runs of slashes collapse to `/`; with allowDoubleSlashes, runs of three or
 *   more collapse to `//` and `//` is kept, even at the start (so the result
 *   may begin with `//`: never use it as a relative `Location` unmodified).
 * - `.` and all-dot segments of three or more are dropped, trailing dots are
 *   stripped from other segments, `..` removes the previous segment (an empty
 *   `//` segment counts as one) and is dropped at the root.
 * - A trailing `/` is kept, and one results when the last segment is a dot
 *   segment (`/a/b/..` → `/a/`). An empty result is `/`.
 *
 * @param {string} pathname percent-encoded path, query removed
 * @param {boolean} [allowDoubleSlashes=false] keep `//` (config `allowDoubleSlashes`)
 * @returns {string|null} clean, still percent-encoded pure-ASCII path starting
 *   with `/` (`*` and `''` are returned unchanged), or null when malformed
 *   (bad `%` escape, `%C0` `%C1` `%FE` `%FF`, invalid UTF-8, lone surrogate): answer 400
 */
function sanitizePath (pathname, allowDoubleSlashes) {
  return sanitizeSeeing(pathname, allowDoubleSlashes === true, null)
}

function sanitizeSeeing (pathname, allowDoubleSlashes, seen) {
  if (pathname === '*' || pathname === '') return pathname
  // A clean path has no `..` segment to resolve.
  if (pathForm(pathname, allowDoubleSlashes) !== NOT_CLEAN) return pathname
  return sanitizeSlow(pathname, allowDoubleSlashes, seen)
}

/**
 * Judge a path produced by a rewrite rule or web-root postfix: 3.x silently
 * normalises `./` and `//` in it but answers 403 "Content blocked" when it
 * tries to climb out of its directory.
 * @param {string} path rewritten path, query removed
 * @param {boolean} [allowDoubleSlashes=false]
 * @returns {'clean'|'normalised'|'escapes'} `clean`: sanitizePath returns it
 *   unchanged; `normalised`: it changes but without resolving `..`;
 *   `escapes`: it contains a `..` segment (after decoding) or is malformed
 */
function classifyRewrite (path, allowDoubleSlashes) {
  const seen = { parent: false }
  const clean = sanitizeSeeing(path, allowDoubleSlashes === true, seen)
  if (clean === null || seen.parent) return 'escapes'
  return clean === path ? 'clean' : 'normalised'
}

module.exports = { sanitizePath, classifyRewrite, pathForm, NOT_CLEAN, CLEAN, PLAIN }
