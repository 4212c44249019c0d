'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { parseRegexString, forMatchTest } = require('../../lib/util/regex')
const { schema } = require('../../lib/config/load')

describe('parseRegexString(str)', () => {
  describe('with a valid "/pattern/flags" string', () => {
    it('should compile the pattern with its flags', () => {
      const re = parseRegexString('/^ab+c$/gi')
      assert.ok(re instanceof RegExp)
      assert.equal(re.source, '^ab+c$')
      assert.equal(re.flags, 'gi')
    })

    it('should accept no flags and an empty pattern', () => {
      assert.equal(parseRegexString('/x/').flags, '')
      assert.equal(parseRegexString('//').test('anything'), true)
    })

    it('should keep an escaped slash inside the pattern', () => {
      const re = parseRegexString('/^\\/docs\\/v2$/')
      assert.equal(re.test('/docs/v2'), true)
      assert.equal(re.test('/docs/v3'), false)
    })

    it('should allow an unescaped slash inside a character class, as a regex literal does', () => {
      const re = parseRegexString('/^a[/?]b$/')
      assert.equal(re.test('a/b'), true)
      assert.equal(re.test('a?b'), true)
    })

    it('should close the pattern after an escaped backslash', () => {
      const re = parseRegexString('/a\\\\/')
      assert.equal(re.source, 'a\\\\')
      assert.equal(re.test('a\\'), true)
    })

    it('should read SVR.JS shipped regex strings', () => {
      assert.equal(parseRegexString('/.*\\.(?:jpe?g|png|bmp|tiff|jfif|gif|webp)$/').test('/img/a.jpeg'), true)
      assert.equal(parseRegexString('/^\\/serverSideScript\\.js(?:$|[?#])/').test('/serverSideScript.js?x'), true)
    })

    it('should return a new RegExp on every call, so lastIndex is never shared', () => {
      const a = parseRegexString('/a/g')
      a.test('aaa')
      assert.notEqual(a, parseRegexString('/a/g'))
      assert.equal(parseRegexString('/a/g').lastIndex, 0)
    })

    it('should read back what RegExp#toString prints', () => {
      fc.assert(fc.property(fc.string(), fc.subarray(['g', 'i', 'm', 's', 'u']), (source, flagList) => {
        let re
        try {
          re = new RegExp(source, flagList.join(''))
        } catch {
          return true
        }
        const parsed = parseRegexString(String(re))
        return parsed.source === re.source && parsed.flags === re.flags
      }), { numRuns: 500 })
    })
  })

  describe('with an invalid string', () => {
    const cases = [
      ['a number', 42, /must be a string/],
      ['no leading slash', 'abc/', /must start with "\/"/],
      ['no closing slash', '/abc', /missing the closing "\/"/],
      ['an unescaped slash in the pattern', '/a/b/', /flags.*\\\//],
      ['flags that are not letters', '/a/g-', /flags/],
      ['an unknown flag', '/a/q', /Invalid flags supplied to RegExp constructor 'q'/],
      ['a repeated flag', '/a/gg', /Invalid flags/],
      ['a pattern RegExp rejects', '/(unclosed/', /Unterminated group/]
    ]
    for (const [what, input, message] of cases) {
      it('should throw a SyntaxError for ' + what, () => {
        assert.throws(() => parseRegexString(input), (err) => {
          assert.ok(err instanceof SyntaxError)
          assert.match(err.message, message)
          return true
        })
      })
    }

    it('should quote the offending string in the message', () => {
      assert.throws(() => parseRegexString('/(unclosed/'), { message: /^invalid regex "\/\(unclosed\/": / })
    })
  })
})

function compiled (source, flags) {
  try {
    return new RegExp(source, flags)
  } catch {
    return null
  }
}

describe('forMatchTest(regex)', () => {
  // Pieces of patterns, each a whole atom or assertion, so that any
  // sequence of them is a valid regex.
  const piece = fc.constantFrom('a', 'b', '.', '\\.', 'a*', 'b+', '[ab]', '[^a]', '(?:a|b)', '(a)', '\\1', '(?=b)', '(?!a)', '(?<=a)', '(?<!b)', '^', '$', '|', '.*', '\\n')
  const pattern = fc.tuple(fc.constantFrom('.*', '.*?', '.+', ''), fc.array(piece, { maxLength: 6 })).map(([lead, rest]) => lead + rest.join(''))
  const flags = fc.subarray(['i', 'm', 's', 'u', 'y', 'g']).map((list) => list.join(''))
  const subject = fc.stringMatching(/^[ab.\n]{0,12}$/)

  it('should find a match exactly where the regex finds one', () => {
    fc.assert(fc.property(pattern, flags, fc.array(subject, { minLength: 1, maxLength: 5 }), (source, flagText, strings) => {
      const regex = compiled(source, flagText)
      // Some sequences are not regexes (`\1` without a group under `u`).
      fc.pre(regex !== null)
      const tester = forMatchTest(regex)
      for (const text of strings) assert.equal(text.search(tester) !== -1, text.search(regex) !== -1, `${regex} on ${JSON.stringify(text)}`)
    }), { numRuns: 3000 })
  })

  it('should drop a leading .* or .*? and keep the flags, and leave every other regex as it is', () => {
    assert.equal(String(forMatchTest(/.*\.ipxe$/i)), '/\\.ipxe$/i')
    assert.equal(String(forMatchTest(/.*?a/)), '/a/')
    assert.equal(String(forMatchTest(/.*/)), '/(?:)/')
    for (const kept of [/a.*/, /^.*x/, /.*x/y, /.*x/g, /\.*x/, /(.*)x/]) assert.equal(forMatchTest(kept), kept)
  })

  it('should leave no default dontCompress regex starting with .*', () => {
    const defaults = schema.properties.dontCompress.default
    assert.equal(defaults.length, 5)
    for (const text of defaults) {
      const regex = parseRegexString(text)
      assert.equal(regex.source.startsWith('.*'), true, text)
      assert.equal(forMatchTest(regex).source.startsWith('.*'), false, text)
      assert.equal(forMatchTest(regex).source, regex.source.slice(2))
    }
  })
})
