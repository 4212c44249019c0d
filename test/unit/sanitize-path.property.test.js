'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fc = require('fast-check')
const { sanitizePath, classifyRewrite, pathForm, NOT_CLEAN, CLEAN, PLAIN } = require('../../lib/paths/sanitize-path')
const { fixRawBytes, decodePath } = require('../../lib/paths/percent')
const { toFsPath } = require('../../lib/paths/fs-path')
const { comparablePath } = require('../../lib/access/forbidden-paths')
const { hasDotSegment } = require('../../lib/pipeline/stages/forbidden')

const ROOT = '/srv/www'
const RUNS = 5000

// Characters that steer the sanitizer: separators, dots and the pieces of
// `%2e`, `%2f`, `%5c`, `%00`, `%c0`, `%fe`, `%ff`.
const hotChar = fc.constantFrom('/', '\\', '.', '%', '2', 'e', 'E', '5', 'c', 'C', 'f', 'F', '0', 'a')
const anyChar = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })
const latin1Char = fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b))

const hotString = fc.string({
  unit: fc.oneof(
    { weight: 12, arbitrary: hotChar },
    { weight: 1, arbitrary: anyChar },
    { weight: 1, arbitrary: latin1Char }
  ),
  maxLength: 40
})

const anyEscape = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.boolean())
  .map(([b, upper]) => {
    const hex = (b < 16 ? '0' : '') + b.toString(16)
    return '%' + (upper ? hex.toUpperCase() : hex)
  })

const token = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/', '//', '\\', '.', '..', '...', 'a.', '%2e', '%2E', '%2f', '%2F', '%5c', '%5C', '%00', '\u0000', '%', '%2', '%c0', '%e2%82%ac', '%e2%82', '%f0%9f%98%80', '<', '"', '#', '?', 'x') },
  { weight: 2, arbitrary: anyEscape },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
  { weight: 1, arbitrary: anyChar }
)
const tokenString = fc.array(token, { maxLength: 16 }).map((parts) => parts.join(''))

// What Node hands over for arbitrary bytes: latin-1 characters.
const rawTarget = fc.string({ unit: latin1Char, maxLength: 30 }).map((s) => '/' + s)

const isPrintableAscii = /^[\x21-\x7e]*$/

/**
 * Every invariant a sanitized path must satisfy, for both slash modes.
 * @param {string} input
 */
function assertSafe (input) {
  for (const allowDoubleSlashes of [false, true]) {
    const result = sanitizePath(input, allowDoubleSlashes)
    if (result === null) continue
    if (input === '*' || input === '') {
      assert.equal(result, input)
      continue
    }
    assert.equal(result[0], '/', 'starts with /')
    assert.match(result, isPrintableAscii, 'pure printable ASCII')
    for (const ch of ['\\', '\u0000', '<', '>', '"', '#', '?']) assert.ok(!result.includes(ch), `no raw ${JSON.stringify(ch)}`)
    assert.ok(!result.includes(allowDoubleSlashes ? '///' : '//'), 'slash runs collapsed')

    const decoded = decodeURIComponent(result)
    assert.ok(!decoded.includes('\u0000'), 'no NUL once decoded')
    for (const segment of decoded.split('/')) {
      // Covers `.` and `..`, and Windows' silent trailing-dot stripping.
      assert.ok(!segment.endsWith('.'), `no dot segment or trailing dot in ${JSON.stringify(decoded)}`)
    }
    const target = path.posix.resolve(ROOT, '.' + decoded)
    assert.ok(target === ROOT || target.startsWith(ROOT + '/'), `${target} inside ${ROOT}`)

    assert.equal(sanitizePath(result, allowDoubleSlashes), result, 'idempotent')
    assert.equal(classifyRewrite(result, allowDoubleSlashes), 'clean', 'result classifies as clean')
  }
}

describe('sanitizePath(pathname, allowDoubleSlashes) properties', () => {
  it('should yield null or a safe, idempotent path for strings of separators, dots and escape pieces', () => {
    fc.assert(fc.property(hotString, assertSafe), { numRuns: RUNS })
  })

  it('should yield null or a safe, idempotent path for sequences of escapes and dot segments', () => {
    fc.assert(fc.property(tokenString, assertSafe), { numRuns: RUNS })
  })

  it('should yield null or a safe, idempotent path for web paths', () => {
    fc.assert(fc.property(fc.webPath({ size: 'medium' }), assertSafe), { numRuns: RUNS })
  })

  it('should yield null or a safe path for raw request bytes after fixRawBytes', () => {
    fc.assert(fc.property(rawTarget, (target) => {
      const fixed = fixRawBytes(target)
      assert.match(fixed, isPrintableAscii, 'fixRawBytes output is printable ASCII')
      assertSafe(fixed)
    }), { numRuns: RUNS })
  })
})

describe('fixRawBytes(url) properties', () => {
  it('should keep the byte sequence of a target without escapes', () => {
    const noPercent = fc.string({ unit: latin1Char, maxLength: 30 }).filter((s) => !s.includes('%'))
    fc.assert(fc.property(noPercent, (target) => {
      const fixed = fixRawBytes(target)
      const bytes = []
      for (let i = 0; i < fixed.length; i++) {
        if (fixed[i] === '%') {
          bytes.push(parseInt(fixed.slice(i + 1, i + 3), 16))
          i += 2
        } else {
          bytes.push(fixed.charCodeAt(i))
        }
      }
      assert.deepEqual(Buffer.from(bytes), Buffer.from(target, 'latin1'))
    }), { numRuns: 2000 })
  })
})

// The sanitizer stage and the forbidden-paths check skip their own searches
// for a path pathForm finds plain (lib/pipeline/stages/sanitize.js,
// lib/pipeline/stages/forbidden.js): each shortcut must give what the long
// way gives.
describe('pathForm(path, allowDoubleSlashes) properties', () => {
  function assertForm (input) {
    for (const allowDoubleSlashes of [false, true]) {
      const form = pathForm(input, allowDoubleSlashes)
      if (form === NOT_CLEAN) continue
      assert.equal(sanitizePath(input, allowDoubleSlashes), input, 'a clean path is returned as it is')
      if (form !== PLAIN) continue
      assert.equal(decodePath(input), input, 'a plain path decodes to itself')
      assert.equal(toFsPath(ROOT, input, true), toFsPath(ROOT, input), 'a plain path joins the root as it is')
      assert.equal(toFsPath('/', input, true), toFsPath('/', input), 'also onto the file system\'s root')
      assert.equal(comparablePath(input, true), comparablePath(input), 'a plain path compares as it is')
      assert.equal(hasDotSegment(comparablePath(input)), false, 'a plain path has no dot segment')
    }
  }

  it('should find clean and plain only what sanitizePath keeps, decoding and joining leave alone', () => {
    fc.assert(fc.property(hotString.map((s) => '/' + s), assertForm), { numRuns: RUNS })
    fc.assert(fc.property(tokenString.map((s) => '/' + s), assertForm), { numRuns: RUNS })
    fc.assert(fc.property(fc.webPath(), assertForm), { numRuns: RUNS })
  })

  it('should find ordinary paths plain, and those with a dot segment or an empty one only clean', () => {
    assert.deepEqual(['/', '/hello', '/a/b.html', '/a/b/', '/A-Z_0~9'].map((p) => pathForm(p, false)), [PLAIN, PLAIN, PLAIN, PLAIN, PLAIN])
    assert.deepEqual(['/.well-known/x', '/a/.git', '/a/..b'].map((p) => pathForm(p, false)), [CLEAN, CLEAN, CLEAN])
    assert.deepEqual(['/a//b', '//'].map((p) => pathForm(p, true)), [CLEAN, CLEAN])
    assert.deepEqual(['/a//b', '/a%20b', '/a.', '/a/./b', 'a', '*', ''].map((p) => pathForm(p, false)), Array(7).fill(NOT_CLEAN))
  })
})
