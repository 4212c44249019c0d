'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { compileStickyCookie, stickyValue, stickyCookieHeader } = require('../../lib/proxy/sticky-cookie')

const cookie = compileStickyCookie({ name: 'svr_upstream', maxAge: null })

describe('the cookie policy\'s cookie', () => {
  it('should find its value among other cookies, and not in a longer name', () => {
    const cases = [
      [undefined, null],
      ['', null],
      ['svr_upstream=abc', 'abc'],
      ['a=1; svr_upstream=abc; b=2', 'abc'],
      ['a=1;svr_upstream=abc', 'abc'],
      ['xsvr_upstream=evil', null],
      ['xsvr_upstream=evil; svr_upstream=good', 'good'],
      ['svr_upstream= padded ', 'padded'],
      ['svr_upstream=', '']
    ]
    assert.deepEqual(cases.map(([header]) => stickyValue(header, cookie)), cases.map(([, value]) => value))
  })

  it('should find the value wherever the pair stands among cookies of other names', () => {
    const name = fc.stringMatching(/^[a-z_]{1,12}$/).filter((n) => n !== 'svr_upstream' && !n.endsWith('svr_upstream'))
    const value = fc.stringMatching(/^[A-Za-z0-9_-]{0,20}$/)
    fc.assert(fc.property(fc.array(fc.tuple(name, value), { maxLength: 6 }), value, fc.nat(6), (others, mine, at) => {
      const pairs = others.map(([n, v]) => n + '=' + v)
      pairs.splice(Math.min(at, pairs.length), 0, 'svr_upstream=' + mine)
      return stickyValue(pairs.join('; '), cookie) === mine
    }))
  })

  it('should write its attributes, Max-Age when set and Secure over HTTPS', () => {
    assert.equal(stickyCookieHeader(cookie, 'abc', false), 'svr_upstream=abc; Path=/; HttpOnly; SameSite=Lax')
    const kept = compileStickyCookie({ name: 'node', maxAge: 600 })
    assert.equal(stickyCookieHeader(kept, 'abc', true), 'node=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure')
  })
})
