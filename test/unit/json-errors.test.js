'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { jsonErrorType, jsonErrorBody } = require('../../lib/error-pages/json')

describe('errors as JSON', () => {
  it('should answer JSON only to clients that rate it above a page', () => {
    const cases = [
      [undefined, null],
      ['*/*', null],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', null],
      ['application/json, text/plain, */*', 'application/json'],
      ['application/json', 'application/json'],
      ['application/problem+json', 'application/problem+json'],
      ['text/html, application/json', null],
      ['text/html;q=0.5, application/json', 'application/json'],
      ['application/json;q=0', null],
      ['application/jsonx', null]
    ]
    assert.deepEqual(cases.map(([accept]) => jsonErrorType({ headers: accept === undefined ? {} : { accept } })), cases.map(([, type]) => type))
  })

  it('should write an RFC 9457 problem with the request id', () => {
    assert.deepEqual(JSON.parse(jsonErrorBody(429, {}, 'abc')), {
      type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'Too many requests were sent; try again later.', requestId: 'abc'
    })
    assert.equal(JSON.parse(jsonErrorBody(404, { description: 'No such user.' }, null)).detail, 'No such user.')
  })
})
