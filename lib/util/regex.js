'use strict'

const FLAGS = /^[0-9A-Za-z]*$/

/**
 * Compile an SVR.JS regex string, `"/pattern/flags"`, the form config.json
 * uses for rewriteMap, nonStandardCodes, dontCompress and friends.
 *
 * The pattern ends at the first `/` that is neither escaped (`\/`) nor inside
 * a character class, exactly as in a JavaScript regex literal, so a config
 * that reads like a literal means what it looks like. Flags are letters and
 * digits; RegExp itself rejects the ones it does not know.
 *
 * A regex with the `g` or `y` flag remembers `lastIndex` between `test()`
 * calls: callers that compile once and test many times should reset it or
 * use `String#search`.
 * @param {string} str
 * @returns {RegExp}
 * @throws {SyntaxError} naming the string and what is wrong with it
 */
function parseRegexString (str) {
  if (typeof str !== 'string') throw new SyntaxError('regex must be a string like "/pattern/flags"')
  if (str.charCodeAt(0) !== 47 /* / */) throw invalid(str, 'must start with "/" (form: "/pattern/flags")')
  const end = patternEnd(str)
  if (end === -1) throw invalid(str, 'missing the closing "/" (a "/" inside the pattern must be written "\\/")')
  const flags = str.slice(end + 1)
  if (!FLAGS.test(flags)) {
    throw invalid(str, 'text after the closing "/" must be flags (letters); a "/" inside the pattern must be written "\\/"')
  }
  try {
    return new RegExp(str.slice(1, end), flags)
  } catch (err) {
    throw invalid(str, err.message)
  }
}

// A leading `.*` or `.*?`, not followed by anything that would quantify it.
const LEADING_ANY_RUN = /^\.\*\??(?![*+?{])/

/**
 * The regex to test whether `regex` matches somewhere in a string, without
 * a leading `.*`: a pattern such as SVR.JS's default `dontCompress` entry
 * `/.*\.ipxe$/` is tried from every start, and the `.*` then runs to the
 * end of the line and back at each, which is quadratic in the length of
 * the string (5 such regexes took 300 ms for an 8,000-character path). A
 * match exists with the `.*` exactly when one exists without it (the `.*`
 * may match nothing, and a match of the rest is inside any match with it;
 * lookbehinds see the input either way), so where only that is asked
 * (`test`, or `search` against -1) the shorter regex gives the same answer
 * in linear time. Sticky and global regexes are kept as they are: their
 * `lastIndex` anchors where a match begins.
 * @param {RegExp} regex
 * @returns {RegExp} the same answers to "is there a match?", maybe a new regex
 */
function forMatchTest (regex) {
  if (regex.sticky || regex.global) return regex
  const run = LEADING_ANY_RUN.exec(regex.source)
  if (run === null) return regex
  try {
    return new RegExp(regex.source.slice(run[0].length), regex.flags)
  } catch {
    // What is left does not stand alone (cannot happen for a valid regex
    // with the checks above, but the original is always a safe answer).
    return regex
  }
}

/**
 * parseRegexString, for a regex that is only asked whether it matches
 * (`search() !== -1`): see forMatchTest. Such are dontCompress, the
 * cacheControl rules, a postfix's `skipRegex` and a rewriteMap rule's
 * `definingRegex`, which match request paths and URLs of up to 8 KiB that
 * the client chooses. Not a regex whose match is replaced (rewriteMap's
 * replacements, a nonStandardCodes entry's `regex` with its `location`,
 * which keeps both): without the `.*` the match starts elsewhere and a
 * group may capture another part.
 * @param {string} str
 * @returns {RegExp}
 * @throws {SyntaxError} as parseRegexString
 */
function parseMatchTester (str) {
  return forMatchTest(parseRegexString(str))
}

// Index of the "/" that closes the pattern, or -1.
function patternEnd (str) {
  let inClass = false
  for (let i = 1; i < str.length; i++) {
    const c = str.charCodeAt(i)
    if (c === 92 /* \ */) i++
    else if (c === 91 /* [ */) inClass = true
    else if (c === 93 /* ] */) inClass = false
    else if (c === 47 /* / */ && !inClass) return i
  }
  return -1
}

function invalid (str, reason) {
  return new SyntaxError('invalid regex ' + JSON.stringify(str) + ': ' + reason)
}

module.exports = { parseRegexString, parseMatchTester, forMatchTest }
