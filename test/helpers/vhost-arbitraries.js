'use strict'

// fast-check generators for virtual-host entries and the requests they are
// matched against, shared by the property tests of the host index and the
// site resolver.

const fc = require('fast-check')
const { compileHostMatcher, compileLocalIpMatcher } = require('../../lib/hosts/vhost')

const label = fc.constantFrom('a', 'b', 'www', 'example', 'com', '')
const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'))
const pattern = fc.oneof(
  fc.constantFrom(undefined, '', '*', '*.', 'A.Example.COM:8080', '[::1]:80', '*.*.com'),
  name,
  name.map((n) => '*.' + n),
  name.map((n) => n.toUpperCase() + ':443')
)
const ip = fc.constantFrom(undefined, undefined, '*', '127.0.0.1', '::ffff:127.0.0.2', '::1')
// An entry's `host` and `ip`, either or both absent.
const entry = fc.record({ host: pattern, ip }, { requiredKeys: [] })
const hostname = fc.oneof(name, fc.constantFrom('', '.', '..', '::1', 'a.example.com', '*.com'))
const local = fc.constantFrom('127.0.0.1', '127.0.0.2', '::1', '')

/**
 * The loop the indexes replace: whether an entry's host and ip fit.
 * @param {{host?: string, ip?: string}} e
 * @param {string} host
 * @param {string} localAddress
 * @returns {boolean}
 */
function entryFits (e, host, localAddress) {
  const hostOk = compileHostMatcher(e.host)
  const ipOk = compileLocalIpMatcher(e.ip)
  return (hostOk === null || hostOk(host)) && (ipOk === null || ipOk(localAddress))
}

module.exports = { entry, hostname, local, entryFits }
