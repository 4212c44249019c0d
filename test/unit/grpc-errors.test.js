'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { isGrpcRequest, grpcStatusOf, grpcErrorFields, encodeGrpcMessage } = require('../../lib/error-pages/grpc')

const call = (type) => ({ headers: type === undefined ? {} : { 'content-type': type } })

describe('gRPC error answers', () => {
  it('should tell gRPC calls by their content type', () => {
    for (const type of ['application/grpc', 'application/grpc+proto', 'Application/GRPC; charset=x', 'application/grpc-web-text']) {
      assert.equal(isGrpcRequest(call(type)), true, type)
    }
    for (const type of [undefined, 'application/json', 'application/grp', 'text/html; application/grpc']) {
      assert.equal(isGrpcRequest(call(type)), false, String(type))
    }
  })

  it('should map the statuses svr answers to gRPC codes', () => {
    const table = [[401, 16], [403, 7], [404, 12], [405, 12], [413, 8], [429, 8], [501, 12], [502, 14], [503, 14], [504, 4],
      [400, 13], [500, 13], [507, 13]]
    assert.deepEqual(table.map(([status]) => [status, grpcStatusOf(status)]), table)
  })

  it('should percent-encode grpc-message as the gRPC spec says', () => {
    assert.equal(encodeGrpcMessage('plain text: ok!'), 'plain text: ok!')
    assert.equal(encodeGrpcMessage('100% été\n'), '100%25 %C3%A9t%C3%A9%0A')
    assert.equal(encodeGrpcMessage('\x7f~'), '%7F~')
  })

  it('should make a trailers-only answer in the call\'s own media type, with the request id for a 5xx', () => {
    assert.deepEqual(grpcErrorFields(call('application/grpc+proto; x=1'), 502, {}, 'abc'), {
      'content-type': 'application/grpc+proto',
      'grpc-status': '14',
      'grpc-message': '502 Bad Gateway: The server received an invalid response from an upstream server. Request ID: abc'
    })
    assert.deepEqual(grpcErrorFields(call('application/grpc'), 404, { description: 'Nothing at 100%.' }, 'abc'), {
      'content-type': 'application/grpc',
      'grpc-status': '12',
      'grpc-message': '404 Not Found: Nothing at 100%25.'
    })
  })
})
