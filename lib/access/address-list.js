'use strict'

const net = require('node:net')
const { AddressRanges } = require('./address-ranges')

const CIDR_BITS = /^\d{1,3}$/

/**
 * Compile a list of client addresses (`blacklist`, `statusAllow`, the
 * `users` of a nonStandardCodes entry) once at boot into sorted ranges
 * (lib/access/address-ranges.js), so that a check costs the same with
 * 100,000 entries as with ten, give or take a few steps of a binary search.
 *
 * Entries are IPv4 or IPv6 addresses, CIDR ranges or "localhost"
 * (127.0.0.0/8 and ::1). Validation is Node's own, so an IPv4 address with a
 * leading zero (`10.01.0.1`) is refused instead of being rewritten into a
 * different address as SVR.JS did. IPv4 is mapped into `::ffff:0:0/96` as
 * net.BlockList does, so an IPv4 rule matches an IPv4-mapped IPv6 client and
 * the other way round.
 * @param {string[]|undefined} entries
 * @returns {((address: string) => boolean) | null} null when the list is empty
 * @throws {TypeError} naming an entry that is not an address, a range or "localhost"
 */
function compileAddressList (entries) {
  if (entries === undefined || entries.length === 0) return null
  const list = new AddressRanges()
  for (const entry of entries) addEntry(list, entry)
  list.seal()
  return function matchesAddress (address) {
    // '' is a Unix-socket peer: never listed.
    return address !== '' && list.check(address)
  }
}

function addEntry (list, entry) {
  if (entry === 'localhost') {
    list.addSubnet('127.0.0.0', 8, 4)
    list.addSubnet('::1', 128, 6)
    return
  }
  const slash = typeof entry === 'string' ? entry.indexOf('/') : -1
  const address = slash === -1 ? entry : entry.slice(0, slash)
  const family = net.isIP(address)
  if (family === 0) throw new TypeError('not an IP address, CIDR range or "localhost": ' + JSON.stringify(entry))
  const max = family === 4 ? 32 : 128
  if (slash === -1) {
    list.addSubnet(address, max, family)
    return
  }
  const bits = entry.slice(slash + 1)
  if (!CIDR_BITS.test(bits) || Number(bits) > max) {
    throw new TypeError('CIDR prefix length must be 0-' + max + ': ' + JSON.stringify(entry))
  }
  list.addSubnet(address, Number(bits), family)
}

const loopback = compileAddressList(['localhost'])

/**
 * Whether a client is on this machine: a loopback address (IPv4-mapped
 * included), or a Unix-socket peer (address ''), which the socket file's
 * permissions already restrict to local users.
 * @param {string} address
 * @returns {boolean}
 */
function isLocalClient (address) {
  return address === '' || loopback(address)
}

module.exports = { compileAddressList, isLocalClient }
