'use strict'

// Characters that end the literal run at the start of a pattern: they
// mean something to RegExp, or may (a `{` or `]` is literal in some places).
const SPECIAL = new Set('\\^$.|?*+()[]{}')
// What a backslash makes literal; every other escape is a class, an
// assertion, a back-reference or a code point, which ends the run.
const ESCAPED_LITERAL = new Set('^$\\.*+?()[]{}|/-')
const QUANTIFIER = new Set('?*+{')

/**
 * The text that every match of a regex must start the input with, worked
 * out from its source: a pattern anchored with `^` and followed by literal
 * characters (`^\/blog\/post-` requires "/blog/post-"). Only what is
 * certain is taken, so the prefix may be shorter than it could be, never
 * wrong:
 * - a `|` outside groups makes the anchor cover one alternative only: none;
 * - the `m` flag lets `^` match after a line break, `y` anchors at
 *   lastIndex: none;
 * - a literal followed by a quantifier (`a?`, `a*`, `a{0,1}`) is left out;
 * - the run stops at the first non-ASCII character;
 * - with `i` (without `u` or `v`, whose case folding maps some non-ASCII
 *   letters to ASCII ones) the prefix is lower case and is to be compared
 *   with the lower-cased input; with `i` and `u`/`v`: none.
 * @param {RegExp} regex
 * @returns {{prefix: string, foldCase: boolean} | null} null when the
 *   pattern requires no prefix, or none can be told from its source
 */
function requiredPrefix (regex) {
  const { source, flags } = regex
  if (source.charCodeAt(0) !== 94 /* ^ */) return null
  if (flags.includes('m') || flags.includes('y')) return null
  const foldCase = flags.includes('i')
  if (foldCase && (flags.includes('u') || flags.includes('v'))) return null
  if (hasTopLevelAlternation(source)) return null
  let prefix = ''
  let i = 1
  while (i < source.length) {
    const c = source[i]
    let literal
    if (c === '\\') {
      if (!ESCAPED_LITERAL.has(source[i + 1])) break
      literal = source[i + 1]
      i += 2
    } else if (SPECIAL.has(c)) {
      break
    } else {
      literal = c
      i += 1
    }
    if (literal.charCodeAt(0) > 127) break
    if (QUANTIFIER.has(source[i])) break
    prefix += literal
  }
  if (prefix === '') return null
  return { prefix: foldCase ? prefix.toLowerCase() : prefix, foldCase }
}

// Whether the pattern is `a|b` at its top level (outside groups and classes).
function hasTopLevelAlternation (source) {
  let depth = 0
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (c === '\\') i++
    else if (inClass) inClass = c !== ']'
    else if (c === '[') inClass = true
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === '|' && depth === 0) return true
  }
  return false
}

module.exports = { requiredPrefix }
