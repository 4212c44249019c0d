'use strict'

// The rewriteMap index must never change which rule wins: the first of
// its candidates that matches is the first rule of the whole list that
// matches, as SVR.JS's plain loop finds it.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { requiredPrefix } = require('../../lib/rewrite/literal-prefix')
const { RuleIndex } = require('../../lib/rewrite/rule-index')
const { collapseSlashes } = require('../../lib/rewrite/rewrite-map')

const RUNS = 3000

// Pieces of patterns as rewriteMap rules are written, and the ones that
// make a literal run stop or not count: quantifiers, alternations, classes,
// escapes, groups.
const piece = fc.constantFrom(
  'a', 'b', 'B', '/', '\\/', '-', '\\-', '\\.', '.', 'p', 'P', 'x', '=', '\\?', '%2F',
  '.*', '(a|b)', '(?:\\/|$)', '[ab]', '[^/]', 'a?', 'b*', '/+', 'a{0,2}', 'b{2}', '|', '$', '\\d', '\\w', '\\b',
  '(?=a)', '(?!b)', '\\x61', '\\u0062', 'é', '\\s', '[]', '[\\]|]'
)
const source = fc.tuple(fc.boolean(), fc.array(piece, { maxLength: 6 })).map(([anchored, pieces]) => (anchored ? '^' : '') + pieces.join(''))
const flags = fc.constantFrom('', '', '', 'i', 'g', 'm', 'y', 's', 'iu', 'u', 'gi')
const regex = fc.tuple(source, flags).map(([src, f]) => {
  try {
    return new RegExp(src, f)
  } catch {
    return new RegExp('^' + src.replace(/[^a-z/]/gi, ''), f.replace('u', ''))
  }
})
const urlChar = fc.constantFrom('/', '/', 'a', 'b', 'A', 'B', 'p', 'P', '-', '.', '?', '=', 'x', '1', '%', '2', 'F', 'é', '\n')
const url = fc.string({ unit: urlChar, maxLength: 12 }).map((text) => '/' + text)

function naiveWinner (regexes, onCollapsed, input) {
  return regexes.findIndex((re, i) => (onCollapsed[i] ? collapseSlashes(input) : input).search(re) !== -1)
}

function indexedWinner (index, regexes, onCollapsed, input) {
  const collapsed = collapseSlashes(input)
  for (const number of index.candidates(input, () => collapsed)) {
    if ((onCollapsed[number] ? collapsed : input).search(regexes[number]) !== -1) return number
  }
  return -1
}

describe('requiredPrefix', () => {
  it('should take the literal run after ^ and leave out a quantified last character', () => {
    assert.deepEqual(requiredPrefix(/^\/blog\/post-1(?:\/|$)/), { prefix: '/blog/post-1', foldCase: false })
    assert.deepEqual(requiredPrefix(/^\/item\.php\?id=7(?:&|$)/), { prefix: '/item.php?id=7', foldCase: false })
    assert.deepEqual(requiredPrefix(/^\/docs?\//), { prefix: '/doc', foldCase: false })
    assert.deepEqual(requiredPrefix(/^\/a{2}/), { prefix: '/', foldCase: false })
    assert.deepEqual(requiredPrefix(/^\/Old-Page/i), { prefix: '/old-page', foldCase: true })
  })

  it('should find no prefix where the anchor does not hold it', () => {
    for (const re of [/\/old-1\.php$/, /^\/a|\/b/, /^\/a/m, /^\/a/y, /^\/Kelvin/iu, /^\d+/, /^(\/a)/, /^é/, /^/]) {
      assert.equal(requiredPrefix(re), null, String(re))
    }
  })

  it('should give a prefix that every matching input starts with', () => {
    fc.assert(fc.property(regex, fc.array(url, { maxLength: 10 }), (re, inputs) => {
      const found = requiredPrefix(re)
      if (found === null) return
      for (const input of inputs) {
        if (input.search(re) === -1) continue
        assert.ok((found.foldCase ? input.toLowerCase() : input).startsWith(found.prefix), `${re} matches ${JSON.stringify(input)} but its prefix is ${JSON.stringify(found.prefix)}`)
      }
    }), { numRuns: RUNS })
  })
})

describe('RuleIndex', () => {
  it('should pick the same rule as the loop over every rule, for any rules and URL', () => {
    fc.assert(fc.property(fc.array(fc.tuple(regex, fc.boolean()), { minLength: 1, maxLength: 15 }), fc.array(url, { minLength: 1, maxLength: 8 }), (rules, inputs) => {
      const regexes = rules.map(([re]) => re)
      const onCollapsed = rules.map(([, collapsed]) => collapsed)
      const index = new RuleIndex(regexes, onCollapsed)
      for (const input of inputs) {
        assert.equal(indexedWinner(index, regexes, onCollapsed, input), naiveWinner(regexes, onCollapsed, input), `${JSON.stringify(input)} against ${regexes.join(' ')}`)
      }
    }), { numRuns: RUNS })
  })

  it('should pick the first rule in configuration order among rules sharing or nesting prefixes', () => {
    const regexes = [/^\/blog\/post-1\//, /^\/blog\//, /\.php$/, /^\/blog\/post-1/, /^\/BLOG/i, /^\/b/]
    const index = new RuleIndex(regexes, regexes.map(() => false))
    const winner = (input) => indexedWinner(index, regexes, regexes.map(() => false), input)
    assert.equal(winner('/blog/post-1/x'), 0)
    assert.equal(winner('/blog/post-12'), 1)
    assert.equal(winner('/x.php'), 2)
    assert.equal(winner('/Blog'), 4)
    assert.equal(winner('/bx'), 5)
    assert.equal(winner('/c'), -1)
    assert.deepEqual(index.candidates('/blog/post-1/x', () => '/blog/post-1/x'), [0, 1, 2, 3, 4, 5])
    assert.deepEqual(index.candidates('/bx', () => '/bx'), [2, 5])
  })

  it('should look up the prefixes of rules tested on the slash-collapsed URL in that URL', () => {
    const regexes = [/^\/old\/page/, /^\/old\/page/]
    const onCollapsed = [true, false]
    const index = new RuleIndex(regexes, onCollapsed)
    assert.deepEqual(index.candidates('//old///page', () => '/old/page'), [0])
    assert.equal(indexedWinner(index, regexes, onCollapsed, '//old///page'), 0)
    assert.deepEqual(index.candidates('/old/page', () => '/old/page'), [0, 1])
  })

  it('should try only the candidates among 10,000 rules with literal prefixes', () => {
    const regexes = Array.from({ length: 10000 }, (_, i) => new RegExp(`^\\/section-${i}\\/`))
    regexes.push(/\.php$/)
    const index = new RuleIndex(regexes, regexes.map(() => false))
    assert.deepEqual(index.candidates('/section-4242/page', () => ''), [4242, 10000])
    assert.deepEqual(index.candidates('/1k.html', () => ''), [10000])
  })
})
