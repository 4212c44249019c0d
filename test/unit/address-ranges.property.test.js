'use strict'

// The sorted ranges behind `blacklist`, `statusAllow` and the console's
// blocklist must answer exactly as net.BlockList, which svr used before
// and whose IPv4-mapping rules they keep.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const fc = require('fast-check')
const { compileAddressList } = require('../../lib/access/address-list')
const { parseIPv4, parseIPv6 } = require('../../lib/access/address-ranges')

const RUNS = 1500

// Few distinct values per part, so that rules overlap, nest and touch.
const octet = fc.constantFrom(0, 1, 2, 10, 127, 128, 191, 192, 254, 255)
const ipv4 = fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.'))
const group = fc.constantFrom(0, 1, 0xdb8, 0x2001, 0xfffe, 0xffff, 0xfe80)
const ipv6Groups = fc.array(group, { minLength: 8, maxLength: 8 })
// Written the ways a client or a config writes IPv6: full, with "::", mapped.
const ipv6 = fc.oneof(
  ipv6Groups.map((groups) => groups.map((g) => g.toString(16)).join(':')),
  ipv6Groups.map((groups) => new URL('http://[' + groups.map((g) => g.toString(16)).join(':') + ']/').hostname.slice(1, -1)),
  ipv4.map((v4) => '::ffff:' + v4),
  ipv4.map((v4) => '::' + v4)
)
const rule = fc.oneof(
  ipv4,
  ipv6,
  fc.tuple(ipv4, fc.integer({ min: 0, max: 32 })).map(([a, bits]) => a + '/' + bits),
  fc.tuple(ipv6, fc.integer({ min: 0, max: 128 })).map(([a, bits]) => a + '/' + bits),
  fc.tuple(ipv6, fc.constantFrom(0, 64, 80, 95, 96, 97, 104, 120, 127, 128)).map(([a, bits]) => a + '/' + bits),
  fc.constant('localhost')
)
const client = fc.oneof(ipv4, ipv6, fc.constantFrom('', 'garbage', '01.2.3.4', '1.2.3', '::ffff:1.2.3.4%eth0', 'fe80::1%lo'))

function blockList (entries) {
  const list = new net.BlockList()
  for (const entry of entries) {
    if (entry === 'localhost') {
      list.addSubnet('127.0.0.0', 8, 'ipv4')
      list.addAddress('::1', 'ipv6')
      continue
    }
    const [address, bits] = entry.split('/')
    const type = net.isIPv4(address) ? 'ipv4' : 'ipv6'
    if (bits === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(bits), type)
  }
  return (address) => address !== '' && list.check(address, address.includes(':') ? 'ipv6' : 'ipv4')
}

describe('address list against net.BlockList', () => {
  it('should answer every client as net.BlockList does, for any list of addresses and ranges', () => {
    fc.assert(fc.property(fc.array(rule, { minLength: 1, maxLength: 12 }), fc.array(client, { minLength: 1, maxLength: 8 }), (entries, clients) => {
      const ours = compileAddressList(entries)
      const theirs = blockList(entries)
      for (const address of clients) assert.equal(ours(address), theirs(address), `${address} against ${JSON.stringify(entries)}`)
    }), { numRuns: RUNS })
  })

  it('should answer the addresses at the edges of each range as net.BlockList does', () => {
    fc.assert(fc.property(fc.array(rule, { minLength: 1, maxLength: 6 }), (entries) => {
      const ours = compileAddressList(entries)
      const theirs = blockList(entries)
      for (const address of edgesOf(entries)) assert.equal(ours(address), theirs(address), `${address} against ${JSON.stringify(entries)}`)
    }), { numRuns: RUNS })
  })
})

// The first and last address of every range, and their neighbours outside.
function edgesOf (entries) {
  const edges = []
  for (const entry of entries) {
    if (entry === 'localhost') continue
    const [address, bitsText] = entry.split('/')
    if (net.isIPv4(address)) {
      const bits = bitsText === undefined ? 32 : Number(bitsText)
      const size = 2 ** (32 - bits)
      const first = parseIPv4(address) - (parseIPv4(address) % size)
      for (const value of [first - 1, first, first + size - 1, first + size]) {
        if (value >= 0 && value <= 0xffffffff) edges.push(formatIPv4(value), '::ffff:' + formatIPv4(value))
      }
    } else {
      const bits = BigInt(bitsText === undefined ? 128 : Number(bitsText))
      const mask = (1n << (128n - bits)) - 1n
      const first = parseIPv6(address) & ~mask & ((1n << 128n) - 1n)
      for (const value of [first - 1n, first, first | mask, (first | mask) + 1n]) {
        if (value >= 0n && value < (1n << 128n)) edges.push(formatIPv6(value))
      }
    }
  }
  return edges
}

function formatIPv4 (value) {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')
}

function formatIPv6 (value) {
  const groups = []
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16))
  return groups.join(':')
}

describe('address list of 100,000 entries', () => {
  it('should block exactly the listed addresses and ranges, IPv4-mapped clients included', () => {
    const entries = []
    for (let i = 0; i < 100000; i++) {
      if (i % 20 === 19) entries.push(`2001:db8::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}`)
      else if (i % 4 === 3) entries.push(`172.${16 + ((i >> 16) & 15)}.${(i >> 8) & 255}.0/24`)
      else entries.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
    }
    const ours = compileAddressList(entries)
    const theirs = blockList(entries)
    // entries[99998] is 10.1.134.158, entries[99999] 2001:db8::1:869f, entries[99995] 172.17.134.0/24.
    const clients = ['10.0.0.0', '10.1.134.158', '10.1.134.159', '::ffff:10.1.134.158', '::ffff:a01:869e', '172.16.0.0',
      '172.16.0.255', '::ffff:172.16.0.7', '172.17.134.255', '172.17.135.0', '2001:db8::1:869f', '2001:db8::1:86a0', '127.0.0.1', '::1']
    for (const address of clients) assert.equal(ours(address), theirs(address), address)
    assert.deepEqual(clients.map(ours), [true, true, false, true, true, true, true, true, true, false, true, false, false, false])
  })
})
