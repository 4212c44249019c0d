'use strict'

// The two indexes that stand in for a loop over every entry must answer
// exactly as that loop: the address index (blacklist, statusAllow, the
// console's blocklist), where a miss lets a blocked client in, and the
// rewrite rule index, where a wrong candidate list makes another rule win.
// The property tests (address-ranges.property, rule-index.property) explore
// at random; these are the edges that must hold on every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { compileAddressList } = require('../../lib/access/address-list')
const { requiredPrefix } = require('../../lib/rewrite/literal-prefix')
const { RuleIndex } = require('../../lib/rewrite/rule-index')

/**
 * @param {string[]} entries
 * @param {Object<string, boolean>} expected client address -> listed
 */
function assertListed (entries, expected) {
  const matches = compileAddressList(entries)
  const actual = {}
  for (const address of Object.keys(expected)) actual[address] = matches(address)
  assert.deepEqual(actual, expected, JSON.stringify(entries))
}

describe('address index edges', () => {
  it('should list the first and last address of a range and neither neighbour, in both families', () => {
    assertListed(['192.0.2.0/24', '2001:db8::/32'], {
      '192.0.1.255': false,
      '192.0.2.0': true,
      '192.0.2.255': true,
      '192.0.3.0': false,
      '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff': false,
      '2001:db8::': true,
      '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff': true,
      '2001:db9::': false
    })
    // The first range in the sorted list, the only one, and a single address.
    assertListed(['0.0.0.0/8', '203.0.113.7'], { '0.0.0.0': true, '0.255.255.255': true, '1.0.0.0': false, '203.0.113.7': true, '203.0.113.6': false })
  })

  it('should take a range written with host bits set as its whole network, as net.BlockList does', () => {
    assertListed(['10.1.2.3/8'], { '9.255.255.255': false, '10.0.0.0': true, '10.1.2.2': true, '10.255.255.255': true, '11.0.0.0': false, '11.1.2.2': false })
  })

  it('should keep the end of a wider range when a narrower one nested in it is merged', () => {
    assertListed(['10.0.0.0/8', '10.1.0.0/16', '10.2.0.5'], { '10.1.255.255': true, '10.2.0.6': true, '10.200.0.1': true, '10.255.255.255': true, '11.0.0.0': false })
    assertListed(['10.1.0.0/16', '10.0.0.0/8'], { '10.200.0.1': true, '11.0.0.0': false })
  })

  it('should look up IPv4-mapped IPv6 clients, dotted or in hex, among the IPv4 rules', () => {
    assertListed(['192.0.2.0/24'], { '::ffff:192.0.2.9': true, '::ffff:c000:209': true, '::ffff:192.0.3.9': false, '::c000:209': false })
    assertListed(['::ffff:192.0.2.0/120'], { '192.0.2.77': true, '192.0.3.77': false })
  })

  it('should refuse a prefix longer than the address has bits', () => {
    assert.throws(() => compileAddressList(['192.0.2.1/33']), { name: 'TypeError', message: 'CIDR prefix length must be 0-32: "192.0.2.1/33"' })
    assert.throws(() => compileAddressList(['2001:db8::/129']), { name: 'TypeError', message: 'CIDR prefix length must be 0-128: "2001:db8::/129"' })
  })
})

/**
 * The rule the index makes win, and the one the loop over every rule finds.
 * @param {RegExp[]} regexes
 * @param {string} url
 * @returns {{indexed: number, loop: number, candidates: number[]}}
 */
function winners (regexes, url) {
  const index = new RuleIndex(regexes, regexes.map(() => false))
  const candidates = [...index.candidates(url, () => url)]
  const found = candidates.find((number) => regexes[number].test(url))
  return { indexed: found === undefined ? -1 : found, loop: regexes.findIndex((re) => re.test(url)), candidates }
}

describe('rewrite rule index edges', () => {
  it('should offer a rule to a URL exactly as long as its prefix', () => {
    assert.deepEqual(winners([/^\/about/, /^\/about-us/], '/about'), { indexed: 0, loop: 0, candidates: [0] })
  })

  it('should hand out the candidates in configuration order, the rules without a prefix among them', () => {
    const regexes = [/^\/blog\//, /\.html$/, /^\/blog\/old/]
    assert.deepEqual(winners(regexes, '/blog/old.html'), { indexed: 0, loop: 0, candidates: [0, 1, 2] })
    assert.deepEqual(winners(regexes, '/shop/x.html'), { indexed: 1, loop: 1, candidates: [1] })
    assert.deepEqual(winners([/\.php$/, /^\/a/], '/a.php'), { indexed: 0, loop: 0, candidates: [0, 1] })
  })

  it('should leave a quantified literal out of the prefix', () => {
    assert.deepEqual(requiredPrefix(/^\/docs?\//), { prefix: '/doc', foldCase: false })
    assert.deepEqual(requiredPrefix(/^\/a+b/), { prefix: '/', foldCase: false })
    assert.deepEqual(winners([/^\/docs?\//], '/doc/intro'), { indexed: 0, loop: 0, candidates: [0] })
  })

  it('should find no prefix for a pattern whose top-level alternation follows a group', () => {
    assert.equal(requiredPrefix(/^\/a(b)|\/c/), null)
    assert.equal(requiredPrefix(/^\/a(?:b|c)(d)|x/), null)
    assert.deepEqual(requiredPrefix(/^\/a(b|c)\/d/), { prefix: '/a', foldCase: false })
    assert.deepEqual(winners([/^\/a(b)|\/c/], '/c'), { indexed: 0, loop: 0, candidates: [0] })
  })

  it('should compare a case-insensitive rule\'s prefix, lower-cased, with the lower-cased URL', () => {
    assert.deepEqual(requiredPrefix(/^\/Old-Page/i), { prefix: '/old-page', foldCase: true })
    assert.deepEqual(winners([/^\/Old-Page/i], '/OLD-page'), { indexed: 0, loop: 0, candidates: [0] })
  })
})
