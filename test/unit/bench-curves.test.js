'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { spliceCurves, curvesSection, selectDimensions } = require('../../bench/curves')
const { blacklistEntries, rewriteRules } = require('../../bench/curve-configs')
const { compileAddressList } = require('../../lib/access/address-list')
const { parseRegexString } = require('../../lib/util/regex')

const SECTION = '## Cost curves\n\nnew table\n'

describe('the curves section of the results file', () => {
  it('should be added to a file without one, replacing nothing else', () => {
    assert.equal(spliceCurves('# Benchmark results\n\nrows\n', SECTION), '# Benchmark results\n\nrows\n\n' + SECTION)
    assert.equal(spliceCurves(null, SECTION), '# Benchmark results\n\n' + SECTION)
  })

  it('should replace the old section and keep the sections after it', () => {
    const old = '# Benchmark results\n\nrows\n\n## Cost curves\n\nold table\n\n## What bounds\n\ntext\n'
    assert.equal(spliceCurves(old, SECTION), '# Benchmark results\n\nrows\n\n## Cost curves\n\nnew table\n\n## What bounds\n\ntext\n')
    assert.equal(curvesSection(old), '## Cost curves\n\nold table\n\n')
    assert.equal(curvesSection('# Benchmark results\n'), '')
  })

  it('should refuse a dimension it does not know, naming the known ones', () => {
    assert.throws(() => selectDimensions(['vhost']), /no curve vhost; known: rewriteMap, vhosts, blacklist, users, listing, mods/)
    assert.deepEqual(selectDimensions(['mods', 'users']).map((d) => d.name), ['users', 'mods'])
  })
})

describe('the generated curve configs', () => {
  it('should never list the loopback client the bench loads from', () => {
    const listed = compileAddressList(blacklistEntries(100000))
    assert.equal(listed('127.0.0.1'), false)
    assert.equal(listed('10.1.134.158'), true)
  })

  it('should write rewrite rules that compile, none matching the loaded path, 1% without an anchor', () => {
    const rules = rewriteRules(1000)
    const regexes = rules.map((rule) => parseRegexString(rule.definingRegex))
    assert.equal(regexes.filter((re) => re.test('/1k.html')).length, 0)
    assert.equal(regexes.filter((re) => !re.source.startsWith('^')).length, 10)
  })
})
