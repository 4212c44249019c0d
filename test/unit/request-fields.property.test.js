'use strict'

// The per-request fields worked out with hand-written loops and a
// per-connection memo, against plain definitions written with
// String#lastIndexOf and regular expressions, over many inputs.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { normalizeRequestHost, lastColon } = require('../../lib/hosts/vhost')
const { extensionOf } = require('../../lib/application/api/legacy-api')
const { legacyUrlObject } = require('../../lib/application/api/url-object')

function referenceExtension (pathname) {
  const slash = pathname.lastIndexOf('/')
  const dot = pathname.lastIndexOf('.')
  return dot > slash + 1 ? pathname.slice(dot + 1).toLowerCase() : ''
}

// Host as SVR.JS users expect it: lower-cased, trailing dots of the name
// dropped (unless the name is only dots), the port kept.
function referenceHost (host) {
  const lower = host.toLowerCase()
  if (lower.startsWith('[')) return lower
  const colon = lower.lastIndexOf(':')
  const end = colon === -1 ? lower.length : colon
  const name = lower.slice(0, end).replace(/\.+$/, '')
  return name === '' ? lower : name + lower.slice(end)
}

function referenceHostname (normal) {
  let name
  if (normal.startsWith('[')) {
    const end = normal.indexOf(']')
    name = end === -1 ? normal : normal.slice(1, end)
  } else {
    const colon = normal.lastIndexOf(':')
    name = colon === -1 ? normal : normal.slice(0, colon)
  }
  return name === '.' || name === '..' ? name : name.replace(/\.+$/, '')
}

// The connection's part of url.parse()'s result for a request, as SVR.JS scripts see it.
function referenceOrigin (raw, encrypted) {
  const protocol = encrypted ? 'https:' : 'http:'
  const host = typeof raw === 'string' ? raw.toLowerCase() : ''
  const bracket = host.lastIndexOf(']')
  const colon = host.lastIndexOf(':')
  const hasPort = colon > bracket && colon !== -1
  const hostname = hasPort ? host.slice(0, colon) : host
  return { protocol, host: host || null, hostname: hostname || null, port: hasPort ? host.slice(colon + 1) : null, href: host ? protocol + '//' + host + '/p?q=1' : '/p?q=1' }
}

const pathChars = fc.constantFrom('/', '.', 'a', 'B', 'z')
const hostChars = fc.constantFrom('a', 'B', '.', ':', '[', ']', '1', 'X')

describe('request fields', () => {
  it('should find the extension a script sees as lastIndexOf did', () => {
    fc.assert(fc.property(fc.string({ unit: pathChars, maxLength: 12 }), (pathname) => {
      assert.equal(extensionOf(pathname), referenceExtension(pathname))
    }), { numRuns: 2000 })
  })

  it('should find the last colon as lastIndexOf does', () => {
    fc.assert(fc.property(fc.string({ unit: hostChars, maxLength: 12 }), (text) => {
      assert.equal(lastColon(text), text.lastIndexOf(':'))
    }), { numRuns: 1000 })
  })

  it('should normalise Host and name the host on every request of a connection, whatever came before', () => {
    const host = fc.string({ unit: hostChars, minLength: 1, maxLength: 10 })
    fc.assert(fc.property(fc.array(host, { minLength: 1, maxLength: 6 }), (hosts) => {
      // One socket for all: a connection whose requests change their Host.
      const socket = {}
      for (const raw of hosts) {
        const req = { socket, headers: { host: raw } }
        const hostname = normalizeRequestHost(req)
        assert.equal(req.headers.host, referenceHost(raw))
        assert.equal(hostname, referenceHostname(referenceHost(raw)))
      }
    }), { numRuns: 1000 })
  })

  it('should give each request of a connection the URL object of its own Host', () => {
    const host = fc.option(fc.string({ unit: hostChars, maxLength: 10 }), { nil: undefined })
    fc.assert(fc.property(fc.boolean(), fc.array(host, { minLength: 1, maxLength: 6 }), (encrypted, hosts) => {
      const socket = { encrypted }
      for (const raw of hosts) {
        const uobject = legacyUrlObject({ socket, headers: { host: raw } }, { pathname: '/p', search: '?q=1' })
        const { protocol, host, hostname, port, href } = uobject
        assert.deepEqual({ protocol, host, hostname, port, href }, referenceOrigin(raw, encrypted))
        assert.deepEqual({ ...uobject.query }, { q: '1' })
      }
    }), { numRuns: 1000 })
  })

  it('should name no host for a request without Host', () => {
    const req = { socket: {}, headers: {} }
    assert.equal(normalizeRequestHost(req), '')
    assert.equal(req.headers.host, undefined)
    const empty = { socket: {}, headers: { host: '' } }
    assert.equal(normalizeRequestHost(empty), '')
    assert.equal(empty.headers.host, '')
  })

  it('should give the first request of a connection its own Host, not the one before it', () => {
    const socket = {}
    const first = { socket, headers: { host: 'Example.COM.:8080' } }
    assert.equal(normalizeRequestHost(first), 'example.com')
    assert.equal(first.headers.host, 'example.com:8080')
    const second = { socket, headers: { host: 'other.test' } }
    assert.equal(normalizeRequestHost(second), 'other.test')
    assert.equal(second.headers.host, 'other.test')
    const third = { socket, headers: { host: 'Example.COM.:8080' } }
    assert.equal(normalizeRequestHost(third), 'example.com')
    assert.equal(third.headers.host, 'example.com:8080')
  })
})
