'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { compileAddressList, isLocalClient } = require('../../lib/access/address-list')
const { createStatusAllowCheck } = require('../../lib/pipeline/stages/status')
const { loadConfig } = require('../../lib/primary/options')

describe('compileAddressList', () => {
  it('should return null for an absent or empty list', () => {
    assert.equal(compileAddressList(undefined), null)
    assert.equal(compileAddressList([]), null)
  })

  it('should match single IPv4 and IPv6 addresses exactly', () => {
    const matches = compileAddressList(['192.0.2.1', '2001:db8::1'])
    assert.equal(matches('192.0.2.1'), true)
    assert.equal(matches('192.0.2.2'), false)
    assert.equal(matches('2001:db8::1'), true)
    assert.equal(matches('2001:db8:0:0:0:0:0:1'), true)
    assert.equal(matches('2001:db8::2'), false)
  })

  it('should match CIDR ranges of both families', () => {
    const matches = compileAddressList(['10.0.0.0/8', '2001:db8::/32', '198.51.100.7/32'])
    assert.equal(matches('10.255.1.2'), true)
    assert.equal(matches('11.0.0.1'), false)
    assert.equal(matches('2001:db8:ffff::1'), true)
    assert.equal(matches('2001:db9::1'), false)
    assert.equal(matches('198.51.100.7'), true)
    assert.equal(matches('198.51.100.8'), false)
  })

  it('should treat "localhost" as 127.0.0.0/8 and ::1', () => {
    const matches = compileAddressList(['localhost'])
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(matches(address), true, address)
    for (const address of ['128.0.0.1', '::2', '192.0.2.1']) assert.equal(matches(address), false, address)
  })

  it('should match IPv4-mapped IPv6 clients as IPv4, and mapped entries against IPv4 clients', () => {
    assert.equal(compileAddressList(['192.0.2.0/24'])('::ffff:192.0.2.9'), true)
    assert.equal(compileAddressList(['::ffff:192.0.2.9'])('192.0.2.9'), true)
    assert.equal(compileAddressList(['192.0.2.0/24'])('::ffff:192.0.3.9'), false)
  })

  it('should match nothing for a Unix-socket peer or garbage', () => {
    const matches = compileAddressList(['0.0.0.0/0', '::/0'])
    assert.equal(matches(''), false)
    assert.equal(matches('not an address'), false)
    assert.equal(matches('203.0.113.5'), true)
  })

  it('should refuse leading-zero IPv4 entries instead of mangling them (S7)', () => {
    assert.throws(() => compileAddressList(['10.01.0.1']), /not an IP address/)
    assert.throws(() => compileAddressList(['010.1.0.0/16']), /not an IP address/)
  })

  it('should refuse bad entries and prefix lengths', () => {
    assert.throws(() => compileAddressList(['example.com']), TypeError)
    assert.throws(() => compileAddressList(['10.0.0.0/33']), /0-32/)
    assert.throws(() => compileAddressList(['::/129']), /0-128/)
    assert.throws(() => compileAddressList(['10.0.0.0/']), /0-32/)
    assert.throws(() => compileAddressList(['10.0.0.0/8x']), /0-32/)
  })
})

describe('blacklist entries in config.json', () => {
  it('should be rejected at load when an IPv4 address has a leading zero', async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-address-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'config.json')
    await fs.writeFile(file, JSON.stringify({ blacklist: ['10.01.0.1'], statusAllow: ['192.0.2.01'] }))
    const err = await loadConfig(file).then(() => assert.fail('expected a rejection'), (e) => e)
    assert.equal(err.code, 'SVR_ERR_CONFIG_INVALID')
    assert.ok(err.problems.some((line) => line.startsWith('/blacklist/0:')), err.problems.join('\n'))
    assert.ok(err.problems.some((line) => line.startsWith('/statusAllow/0:')), err.problems.join('\n'))
  })
})

describe('isLocalClient', () => {
  it('should accept loopback and Unix-socket peers only', () => {
    for (const address of ['127.0.0.1', '127.0.0.53', '::1', '::ffff:127.0.0.1', '']) {
      assert.equal(isLocalClient(address), true, address)
    }
    for (const address of ['192.0.2.2', 'fd00::2', '::', '0.0.0.0', '::ffff:192.0.2.2']) {
      assert.equal(isLocalClient(address), false, address)
    }
  })
})

describe('createStatusAllowCheck', () => {
  it('should allow only local clients without statusAllow', () => {
    const allowed = createStatusAllowCheck([])
    assert.equal(allowed('127.0.0.1'), true)
    assert.equal(allowed('192.0.2.2'), false)
  })

  it('should add the statusAllow addresses and ranges to loopback', () => {
    const allowed = createStatusAllowCheck(['192.0.2.0/24', '2001:db8::7'])
    assert.equal(allowed('::1'), true)
    assert.equal(allowed('192.0.2.200'), true)
    assert.equal(allowed('2001:db8::7'), true)
    assert.equal(allowed('198.51.100.1'), false)
    assert.equal(allowed('2001:db8::8'), false)
  })
})
