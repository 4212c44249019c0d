'use strict'

// Anything a client controls may reach the log: the request line, Referer,
// User-Agent. Quotes, backslashes, control bytes and everything outside
// printable ASCII become \xHH (as nginx writes them), so no value can end
// its field early, start a new line or smuggle terminal escapes into a
// `tail -f`. Node decodes request lines and header values as latin1, so
// each character below U+0100 is exactly one byte received.
const NEEDS_ESCAPE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/
// An unquoted field (the user name) must not contain spaces either.
const NEEDS_ESCAPE_BARE = /[^\x21\x23-\x5b\x5d-\x7e]/
const HEX = '0123456789ABCDEF'

/**
 * @param {string} value
 * @returns {string} value with `"`, `\`, control and non-ASCII bytes as \xHH
 */
function escapeLogValue (value) {
  if (!NEEDS_ESCAPE.test(value)) return value
  return escapeFrom(value, false)
}

/**
 * For a field written without quotes: spaces are escaped too.
 * @param {string} value
 * @returns {string}
 */
function escapeBareLogValue (value) {
  if (!NEEDS_ESCAPE_BARE.test(value)) return value
  return escapeFrom(value, true)
}

function escapeFrom (value, bare) {
  let out = ''
  let start = 0
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (isPlain(code, bare)) continue
    out += value.slice(start, i)
    start = i + 1
    if (code < 0x100) {
      out += hexByte(code)
    } else {
      // Only values from application code can hold wider characters;
      // their UTF-8 bytes keep the line pure ASCII.
      const end = isHighSurrogate(code) && i + 1 < value.length ? i + 2 : i + 1
      for (const byte of Buffer.from(value.slice(i, end))) out += hexByte(byte)
      start = end
      i = end - 1
    }
  }
  return out + value.slice(start)
}

function isPlain (code, bare) {
  if (code === 0x22 || code === 0x5c) return false
  if (code === 0x20) return !bare
  return code > 0x20 && code < 0x7f
}

function isHighSurrogate (code) {
  return code >= 0xd800 && code <= 0xdbff
}

function hexByte (code) {
  return '\\x' + HEX[code >> 4] + HEX[code & 15]
}

module.exports = { escapeLogValue, escapeBareLogValue }
