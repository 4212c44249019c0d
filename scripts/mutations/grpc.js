'use strict'

// Mutations of the area 'grpc': HTTP/2 upstreams, trailers and gRPC error
// answers (see scripts/mutations.js for the fields).

const GRPC = 'test/proxy/grpc.test.js'
const TRAILERS = 'test/proxy/trailers.test.js'

module.exports = [
  {
    area: 'grpc',
    file: 'lib/proxy/response-end.js',
    what: 'the upstream\'s trailers are not passed on (a gRPC client gets no status)',
    find: '    res.addTrailers(fields)\n',
    replace: '    void fields\n',
    tests: [GRPC, TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/response-end.js',
    what: 'an HTTP/2 upstream\'s trailers are taken from onResponseEnd, where undici 7 leaves them empty',
    find: 'responseTrailers(overHttp2 ? raw : trailers)',
    replace: 'responseTrailers(trailers)',
    tests: [GRPC, TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/response-end.js',
    what: 'an answer without body ends with its head, before its trailers',
    find: '    if (!res.headersSent) res.flushHeaders()\n    return true',
    replace: '    return true',
    tests: [TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/response-end.js',
    what: 'an HTTP/2 upstream is paused as soon as the client is slow, and undici drops what it buffered when the trailers come',
    find: 'const HTTP2_HOLD_BYTES = 1024 * 1024',
    replace: 'const HTTP2_HOLD_BYTES = 0',
    tests: [TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/headers.js',
    what: 'TE: trailers is dropped with the other hop-by-hop fields',
    find: "  if (acceptsTrailers(incoming.te)) out.te = 'trailers'\n",
    replace: '',
    tests: [TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/upstream-tls.js',
    what: 'an h2c:// upstream is spoken to in HTTP/1.1',
    find: '  if (address.h2c) return { timeout, useH2c: true }\n',
    replace: '  if (address.h2c) return { timeout }\n',
    tests: [GRPC, TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/upstream-tls.js',
    what: 'a route with http2 does not offer h2 in ALPN',
    find: 'rejectUnauthorized: tls.rejectUnauthorized, allowH2: http2 }',
    replace: 'rejectUnauthorized: tls.rejectUnauthorized }',
    tests: [GRPC]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/health-service.js',
    what: 'active checks of an h2c:// upstream speak HTTP/1.1, which it refuses',
    find: 'connectOption(this.address, this.check.timeout, this.tls, this.http2)',
    replace: 'connectOption({ ...this.address, h2c: false }, this.check.timeout, this.tls, this.http2)',
    tests: [TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/proxy/tunnel.js',
    what: 'a WebSocket handshake goes to an upstream that may speak HTTP/2',
    find: '  if (route.members.some(mayBeHttp2)) {',
    replace: '  if (false) {',
    tests: [TRAILERS]
  },
  {
    area: 'grpc',
    file: 'lib/pipeline/request/respond.js',
    what: 'a gRPC call gets an HTML error page',
    find: '  if (isGrpcRequest(ctx.req)) {',
    replace: '  if (false) {',
    tests: [GRPC]
  },
  {
    area: 'grpc',
    file: 'lib/error-pages/grpc.js',
    what: 'every error is INTERNAL to a gRPC client',
    find: '  return STATUS_OF_HTTP[status] || GRPC.INTERNAL',
    replace: '  return GRPC.INTERNAL',
    tests: [GRPC, 'test/unit/grpc-errors.test.js']
  },
  {
    area: 'grpc',
    file: 'lib/pipeline/request/respond.js',
    what: 'a gRPC error has a body, so it is no trailers-only answer',
    find: '  headForWrappers(res)\n  res.end()\n}',
    replace: "  headForWrappers(res)\n  res.end('x')\n}",
    tests: [GRPC]
  }
]
