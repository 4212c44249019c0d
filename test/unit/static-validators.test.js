'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { strongEtag, etagListMatches } = require('../../lib/static/etag')
const { checkPreconditions } = require('../../lib/static/conditional')

const STAT = { ino: 1234, size: 6756, mtimeMs: 1700000000123.456 }

describe('strongEtag(stat, suffix)', () => {
  it('should be a quoted strong tag that changes with inode, size, mtime and suffix', () => {
    const tag = strongEtag(STAT, '')
    assert.match(tag, /^"[0-9a-f-]+"$/)
    const variants = [
      strongEtag({ ...STAT, ino: 1235 }, ''),
      strongEtag({ ...STAT, size: 6757 }, ''),
      strongEtag({ ...STAT, mtimeMs: STAT.mtimeMs + 0.001 }, ''),
      strongEtag(STAT, '-br'),
      strongEtag(STAT, '-gz')
    ]
    assert.equal(new Set([tag, ...variants]).size, 6)
    assert.equal(strongEtag({ ...STAT }, ''), tag, 'same stats, same tag')
  })
})

describe('etagListMatches(header, etag, weak)', () => {
  const tag = '"abc-1"'

  it('should find the tag in a list, with or without spaces', () => {
    assert.equal(etagListMatches(tag, tag, true), true)
    assert.equal(etagListMatches('"x", ' + tag, tag, true), true)
    assert.equal(etagListMatches('"x",' + tag + ',"y"', tag, false), true)
  })

  it('should match "*" whenever the representation exists', () => {
    assert.equal(etagListMatches('*', tag, false), true)
    assert.equal(etagListMatches('*', null, false), true)
  })

  it('should ignore W/ in the weak comparison only', () => {
    assert.equal(etagListMatches('W/' + tag, tag, true), true)
    assert.equal(etagListMatches('W/' + tag, tag, false), false)
  })

  it('should not match prefixes, bare tokens, other tags or a missing tag', () => {
    assert.equal(etagListMatches('"abc-12"', tag, true), false)
    assert.equal(etagListMatches('"abc-"', tag, true), false)
    assert.equal(etagListMatches('abc-1', tag, true), false)
    assert.equal(etagListMatches('"x", "y"', tag, true), false)
    assert.equal(etagListMatches(tag, null, true), false)
  })

  it('should survive malformed lists', () => {
    for (const header of ['', ',', '"', 'W/', 'W/"', '"unterminated', 'junk, ' + tag]) {
      assert.equal(typeof etagListMatches(header, tag, true), 'boolean', header)
    }
    assert.equal(etagListMatches('junk, ' + tag, tag, true), true)
    assert.equal(etagListMatches('"a,b", ' + tag, tag, true), true)
  })
})

describe('checkPreconditions(headers, etag, lastModified)', () => {
  const etag = '"t-1"'
  const lastModified = Date.parse('Tue, 14 Nov 2023 22:13:20 GMT')
  const before = 'Tue, 14 Nov 2023 22:13:19 GMT'
  const same = 'Tue, 14 Nov 2023 22:13:20 GMT'
  const after = 'Tue, 14 Nov 2023 22:13:21 GMT'

  function check (headers, tag = etag) {
    return checkPreconditions(headers, tag, lastModified)
  }

  it('should send the representation without preconditions', () => {
    assert.equal(check({}), 0)
  })

  it('should fail If-Match unless a listed tag matches strongly', () => {
    assert.equal(check({ 'if-match': '"other"' }), 412)
    assert.equal(check({ 'if-match': 'W/' + etag }), 412)
    assert.equal(check({ 'if-match': etag }), 0)
    assert.equal(check({ 'if-match': '*' }), 0)
    assert.equal(check({ 'if-match': etag }, null), 412, 'no tag to match without ETags')
  })

  it('should evaluate If-Unmodified-Since only without If-Match', () => {
    assert.equal(check({ 'if-unmodified-since': before }), 412)
    assert.equal(check({ 'if-unmodified-since': same }), 0)
    assert.equal(check({ 'if-unmodified-since': 'not a date' }), 0)
    assert.equal(check({ 'if-match': etag, 'if-unmodified-since': before }), 0)
  })

  it('should answer 304 to a matching If-None-Match', () => {
    assert.equal(check({ 'if-none-match': etag }), 304)
    assert.equal(check({ 'if-none-match': 'W/' + etag }), 304)
    assert.equal(check({ 'if-none-match': '*' }), 304)
    assert.equal(check({ 'if-none-match': '"other"' }), 0)
  })

  it('should let If-None-Match decide over If-Modified-Since', () => {
    assert.equal(check({ 'if-none-match': '"other"', 'if-modified-since': after }), 0)
    assert.equal(check({ 'if-modified-since': same }), 304)
    assert.equal(check({ 'if-modified-since': after }), 304)
    assert.equal(check({ 'if-modified-since': before }), 0)
    assert.equal(check({ 'if-modified-since': 'garbage' }), 0)
  })

  it('should put 412 before 304', () => {
    assert.equal(check({ 'if-match': '"other"', 'if-none-match': etag }), 412)
  })

  it('should send the body to a request with Cache-Control: no-cache, as send does', () => {
    assert.equal(check({ 'if-none-match': etag, 'cache-control': 'no-cache' }), 0)
    assert.equal(check({ 'if-modified-since': same, 'cache-control': 'max-age=0, no-cache' }), 0)
    assert.equal(check({ 'if-none-match': etag, 'cache-control': 'max-age=0' }), 304)
    assert.equal(check({ 'if-none-match': etag, 'cache-control': 'no-cache-please' }), 304)
  })
})
