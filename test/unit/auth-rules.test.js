'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { compileAuthRules, findAuthRule, challengeFor, DEFAULT_REALM } = require('../../lib/auth/rules')
const { siteFor } = require('../helpers/site')

function ctxFor (pathname, extra = {}) {
  return { pathname, search: '', decodedPath: null, hostname: 'example.com', localAddress: '127.0.0.1', ...extra }
}

describe('auth rules', () => {
  it('should keep only 401 entries, in order', () => {
    const rules = compileAuthRules([
      { scode: 403, url: '/a' },
      { scode: 401, url: '/a', realm: 'first' },
      { scode: 401, url: '/a', realm: 'second' }
    ])
    assert.equal(rules.length, 2)
    assert.equal(findAuthRule(rules, ctxFor('/a')).challenge['WWW-Authenticate'], challengeFor('first'))
  })

  it('should match url after slash collapsing, encoded or decoded, and nothing below it', () => {
    const rules = compileAuthRules([{ scode: 401, url: '/caf%C3%A9' }, { scode: 401, url: '/admin' }])
    assert.equal(findAuthRule(rules, ctxFor('//admin')), rules[1])
    assert.equal(findAuthRule(rules, ctxFor('/admin/')), null)
    assert.equal(findAuthRule(rules, ctxFor('/admin/x')), null)
    assert.equal(findAuthRule(rules, ctxFor('/caf%C3%A9')), rules[0])
    const decoded = compileAuthRules([{ scode: 401, url: '/café' }])
    assert.equal(findAuthRule(decoded, ctxFor('/caf%C3%A9', { decodedPath: '/café' })), decoded[0])
  })

  it('should try a regex on path + query and on the collapsed path, every time', () => {
    const rules = compileAuthRules([{ scode: 401, regex: '/^\\/secret(?:$|[/?])/g' }, { scode: 401, regex: '/[?&]admin=1/' }])
    for (let i = 0; i < 3; i++) assert.equal(findAuthRule(rules, ctxFor('/secret/x')), rules[0])
    assert.equal(findAuthRule(rules, ctxFor('//secret')), rules[0])
    assert.equal(findAuthRule(rules, ctxFor('/secretive')), null)
    assert.equal(findAuthRule(rules, ctxFor('/x', { search: '?admin=1' })), rules[1])
  })

  it('should honour host and ip', () => {
    const entries = [{ scode: 403, url: '/' }, { scode: 401, url: '/', host: '*.example.org', ip: '192.0.2.1' }]
    const rules = compileAuthRules(entries)
    // The request's site (lib/pipeline/site.js) says which entries its host and address select.
    const at = (hostname, localAddress = '127.0.0.1') => ctxFor('/', { site: siteFor({ nonStandardCodes: entries }, hostname, localAddress) })
    assert.equal(findAuthRule(rules, at('www.example.org', '192.0.2.1')), rules[0])
    assert.equal(findAuthRule(rules, at('www.example.org')), null)
    assert.equal(findAuthRule(rules, at('example.com', '192.0.2.1')), null)
  })

  it('should compile userList, realm and brute protection', () => {
    const [rule] = compileAuthRules([{ scode: 401, url: '/', userList: ['bob'], disableBruteProtection: true }])
    assert.deepEqual([...rule.userList], ['bob'])
    assert.equal(rule.throttled, false)
    assert.equal(rule.challenge['WWW-Authenticate'], 'Basic realm="' + DEFAULT_REALM + '", charset="UTF-8"')
    assert.equal(compileAuthRules([{ scode: 401, url: '/' }])[0].throttled, true)
  })

  it('should quote the realm and keep it a valid header value', () => {
    assert.equal(challengeFor('Say "hi" \\ bye'), 'Basic realm="Say \\"hi\\" \\\\ bye", charset="UTF-8"')
    assert.equal(challengeFor('a\r\nSet-Cookie: x'), 'Basic realm="aSet-Cookie: x", charset="UTF-8"')
    const utf8 = challengeFor('Zoné 日本')
    assert.equal(Buffer.from(utf8, 'latin1').toString('utf8'), 'Basic realm="Zoné 日本", charset="UTF-8"')
    assert.doesNotThrow(() => require('node:http').validateHeaderValue('WWW-Authenticate', utf8))
  })
})
