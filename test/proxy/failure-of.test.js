'use strict'

// What a failed attempt at an upstream means: retried elsewhere or not,
// counted against the upstream's health or not, and the status answered.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { failureOf } = require('../../lib/proxy/failures')

function error (code, message = 'failed') {
  return Object.assign(new Error(message), { code })
}

test('a connect error is unreached, whenever it comes', () => {
  assert.deepEqual(failureOf(error('ECONNREFUSED', 'connect ECONNREFUSED')), {
    status: 502, unreached: true, requestRefused: false, reason: 'ECONNREFUSED: connect ECONNREFUSED'
  })
  assert.equal(failureOf(error('UND_ERR_CONNECT_TIMEOUT')).status, 504)
  assert.equal(failureOf(error('UND_ERR_CONNECT_TIMEOUT')).unreached, true)
})

test('a failure before undici began sending is unreached: a certificate that does not verify', () => {
  assert.equal(failureOf(error('DEPTH_ZERO_SELF_SIGNED_CERT'), false).unreached, true)
  assert.equal(failureOf(error('ERR_TLS_CERT_ALTNAME_INVALID'), false).unreached, true)
  // Once the request was on its way, the upstream may have acted on it.
  assert.equal(failureOf(error('UND_ERR_HEADERS_TIMEOUT'), true).unreached, false)
  assert.equal(failureOf(error('UND_ERR_HEADERS_TIMEOUT'), true).status, 504)
})

test('undici refusing the request itself blames no upstream and tries no other', () => {
  for (const code of ['UND_ERR_INVALID_ARG', 'ERR_INVALID_CHAR']) {
    const failure = failureOf(error(code), false)
    assert.equal(failure.requestRefused, true, code)
    assert.equal(failure.unreached, false, code)
    assert.equal(failure.status, 502, code)
  }
  assert.equal(failureOf(error('ECONNRESET'), false).requestRefused, false)
})
