'use strict'

const net = require('node:net')

// IPv4 lives in IPv6 as ::ffff:a.b.c.d (RFC 4291 2.5.5.2), as in
// net.BlockList: an IPv4 rule matches a mapped client and an IPv6 rule
// over ::ffff:0:0/96 matches an IPv4 one.
const MAPPED_BASE = 0xffffn << 32n
const MAPPED_LAST = MAPPED_BASE + 0xffffffffn
const ALL_V6 = (1n << 128n) - 1n

/**
 * The addresses and CIDR ranges of a list as sorted, merged ranges, found
 * by binary search: the cost of a check grows with the logarithm of the
 * list's length (net.BlockList tries its rules one after the other).
 * IPv4 and IPv4-mapped addresses are looked up among 32-bit ranges, every
 * other IPv6 address among 128-bit ones.
 */
class AddressRanges {
  constructor () {
    // An IPv4 range is always an aligned block, kept as one number:
    // first address × 64 + host bits, so that a plain numeric sort orders them.
    this.v4 = []
    this.v6 = []
    this.v4Starts = null
    this.v4Ends = null
    this.v6Starts = null
    this.v6Ends = null
  }

  /**
   * @param {string} address a valid IPv4 or IPv6 address
   * @param {number} bits prefix length: 32 or 128 for one address
   * @param {4|6} family
   */
  addSubnet (address, bits, family) {
    if (family === 4) {
      this.addIPv4(parseIPv4(address), 32 - bits)
      return
    }
    const value = parseIPv6(address)
    const mask = bits === 0 ? ALL_V6 : (1n << BigInt(128 - bits)) - 1n
    const first = value & (ALL_V6 ^ mask)
    const last = first | mask
    this.v6.push([first, last])
    // The part of the range over ::ffff:0:0/96 is IPv4 space.
    // A prefix of at least 96 bits lies inside it, a shorter one covers it.
    if (first <= MAPPED_LAST && last >= MAPPED_BASE) {
      this.addIPv4(bits >= 96 ? Number(first - MAPPED_BASE) : 0, Math.min(128 - bits, 32))
    }
  }

  // The aligned block of 2^hostBits addresses that holds `address`.
  addIPv4 (address, hostBits) {
    const size = 2 ** hostBits
    this.v4.push((address - (address % size)) * 64 + hostBits)
  }

  /** Sort and merge the ranges; call once, after the last addSubnet. */
  seal () {
    this.sealIPv4(Float64Array.from(this.v4).sort())
    const v6 = mergeRanges(this.v6)
    this.v6Starts = v6.map((r) => r[0])
    this.v6Ends = v6.map((r) => r[1])
    this.v4 = null
    this.v6 = null
    return this
  }

  sealIPv4 (blocks) {
    const starts = new Float64Array(blocks.length)
    const ends = new Float64Array(blocks.length)
    let count = 0
    for (const block of blocks) {
      const hostBits = block % 64
      const start = (block - hostBits) / 64
      const end = start + 2 ** hostBits - 1
      if (count !== 0 && start <= ends[count - 1] + 1) {
        if (end > ends[count - 1]) ends[count - 1] = end
      } else {
        starts[count] = start
        ends[count] = end
        count++
      }
    }
    this.v4Starts = starts.subarray(0, count)
    this.v4Ends = ends.subarray(0, count)
  }

  /**
   * @param {string} address a client address; anything else never matches
   * @returns {boolean}
   */
  check (address) {
    if (address.indexOf(':') === -1) {
      const value = parseIPv4(address)
      return value !== -1 && within(this.v4Starts, this.v4Ends, value)
    }
    if (!net.isIPv6(address)) return false
    const value = parseIPv6(address)
    if (value >= MAPPED_BASE && value <= MAPPED_LAST) return within(this.v4Starts, this.v4Ends, Number(value - MAPPED_BASE))
    return within(this.v6Starts, this.v6Ends, value)
  }
}

// [first, last] pairs of BigInts, sorted, overlapping and adjacent ones joined.
function mergeRanges (ranges) {
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const merged = []
  for (const range of ranges) {
    const last = merged[merged.length - 1]
    if (last !== undefined && range[0] <= last[1] + 1n) {
      if (range[1] > last[1]) last[1] = range[1]
    } else {
      merged.push(range)
    }
  }
  return merged
}

// Whether value falls into one of the sorted, disjoint ranges.
function within (starts, ends, value) {
  let low = 0
  let high = starts.length - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    if (starts[mid] > value) high = mid - 1
    else if (ends[mid] < value) low = mid + 1
    else return true
  }
  return false
}

/**
 * Dotted-quad IPv4 as a number, by the rules of net.isIPv4: four decimal
 * parts of 0-255 without leading zeros.
 * @param {string} text
 * @returns {number} -1 when text is not an IPv4 address
 */
function parseIPv4 (text) {
  let value = 0
  let part = 0
  let digits = 0
  let parts = 0
  for (let i = 0; i <= text.length; i++) {
    const c = i === text.length ? 46 /* . */ : text.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || ++parts > 4) return -1
      value = value * 256 + part
      part = 0
      digits = 0
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && part === 0) return -1
      part = part * 10 + c - 48
      if (++digits > 3 || part > 255) return -1
    } else {
      return -1
    }
  }
  return parts === 4 ? value : -1
}

/**
 * IPv6 text (with "::", an embedded IPv4 part or a zone, which is ignored
 * as net.BlockList does) as a 128-bit number.
 * @param {string} text an address net.isIPv6 accepts
 * @returns {bigint}
 */
function parseIPv6 (text) {
  const zone = text.indexOf('%')
  const plain = zone === -1 ? text : text.slice(0, zone)
  const gap = plain.indexOf('::')
  const head = gap === -1 ? groups(plain) : groups(plain.slice(0, gap))
  const tail = gap === -1 ? [] : groups(plain.slice(gap + 2))
  const all = head.concat(new Array(8 - head.length - tail.length).fill(0), tail)
  let value = 0n
  for (const group of all) value = (value << 16n) | BigInt(group)
  return value
}

function groups (text) {
  if (text === '') return []
  const out = []
  for (const piece of text.split(':')) {
    if (piece.indexOf('.') === -1) {
      out.push(parseInt(piece, 16))
    } else {
      const v4 = parseIPv4(piece)
      out.push(Math.floor(v4 / 65536), v4 % 65536)
    }
  }
  return out
}

module.exports = { AddressRanges, parseIPv4, parseIPv6 }
