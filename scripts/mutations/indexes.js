'use strict'

// Mutations of the area 'indexes' (see scripts/mutations.js for the fields).

const ADDRESSES = ['test/unit/indexes-safety.test.js', 'test/unit/address-list.test.js', 'test/unit/address-ranges.property.test.js']
const RULES = ['test/unit/indexes-safety.test.js', 'test/unit/rule-index.property.test.js']

module.exports = [
  // The address index behind blacklist, statusAllow and the console's blocklist
  {
    area: 'indexes',
    file: 'lib/access/address-ranges.js',
    what: 'the binary search misses the first address of every range',
    find: 'if (starts[mid] > value) high = mid - 1',
    replace: 'if (starts[mid] >= value) high = mid - 1',
    tests: ADDRESSES
  },
  {
    area: 'indexes',
    file: 'lib/access/address-ranges.js',
    what: 'an IPv4 range written with host bits set (10.1.2.3/8) starts at that address, not at its network',
    find: 'this.v4.push((address - (address % size)) * 64 + hostBits)',
    replace: 'this.v4.push(address * 64 + hostBits)',
    tests: ADDRESSES
  },
  {
    area: 'indexes',
    file: 'lib/access/address-ranges.js',
    what: 'an IPv4-mapped IPv6 client (::ffff:a.b.c.d) is not looked up among the IPv4 rules',
    find: '    if (value >= MAPPED_BASE && value <= MAPPED_LAST) return within(this.v4Starts, this.v4Ends, Number(value - MAPPED_BASE))\n',
    replace: '\n',
    tests: ADDRESSES
  },
  {
    area: 'indexes',
    file: 'lib/access/address-ranges.js',
    what: 'merging keeps the end of the earlier range when a nested one ends later',
    find: '      if (end > ends[count - 1]) ends[count - 1] = end\n',
    replace: '      ends[count - 1] = end\n',
    tests: ADDRESSES
  },
  {
    area: 'indexes',
    file: 'lib/access/address-list.js',
    what: 'a CIDR prefix longer than the family allows (10.0.0.0/33) is accepted',
    find: "if (!CIDR_BITS.test(bits) || Number(bits) > max) {",
    replace: 'if (!CIDR_BITS.test(bits)) {',
    tests: ADDRESSES
  },
  // The rewrite rule index
  {
    area: 'indexes',
    file: 'lib/rewrite/rule-index.js',
    what: 'a URL exactly as long as a rule\'s prefix never gets that rule as a candidate',
    find: 'if (length > input.length) return',
    replace: 'if (length >= input.length) return',
    tests: RULES
  },
  {
    area: 'indexes',
    file: 'lib/rewrite/rule-index.js',
    what: 'the candidates are not put back in configuration order, so a later rule can win',
    find: '  return all.sort((a, b) => a - b)',
    replace: '  return all',
    tests: RULES
  },
  {
    area: 'indexes',
    file: 'lib/rewrite/rule-index.js',
    what: 'rules without a usable prefix are left out when some rule has one',
    find: 'const lists = this.always.length === 0 ? [] : [this.always]',
    replace: 'const lists = []',
    tests: RULES
  },
  {
    area: 'indexes',
    file: 'lib/rewrite/literal-prefix.js',
    what: 'a literal followed by a quantifier (/docs?/) is kept in the prefix',
    find: '    if (QUANTIFIER.has(source[i])) break\n',
    replace: '\n',
    tests: RULES
  },
  {
    area: 'indexes',
    file: 'lib/rewrite/literal-prefix.js',
    what: 'an alternation after a group (^/a(b)|/c) is taken for one inside it, and the anchor for the whole pattern',
    find: "    else if (c === ')') depth--\n",
    replace: '\n',
    tests: RULES
  },
  {
    area: 'indexes',
    file: 'lib/rewrite/literal-prefix.js',
    what: 'a case-insensitive rule gets a prefix in its own case, compared with the lower-cased URL',
    find: "return { prefix: foldCase ? prefix.toLowerCase() : prefix, foldCase }",
    replace: 'return { prefix, foldCase }',
    tests: RULES
  }
]
