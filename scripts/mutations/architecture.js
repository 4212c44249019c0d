'use strict'

// Mutations of the area 'architecture' (see scripts/mutations.js for the
// fields): the process boundaries, the one request object and the features
// registered with the configuration loader.

module.exports = [
  {
    area: 'architecture',
    file: 'lib/primary/main.js',
    what: 'the primary of a cluster loads the single-threaded launcher, and with it the worker and the pipeline',
    find: "const { runPrimary } = require('./run-primary')\n",
    replace: "const { runPrimary } = require('./run-primary')\nrequire('./single')\n",
    tests: ['test/cluster/primary-modules.test.js']
  },
  {
    area: 'architecture',
    file: 'lib/http2/promote.js',
    what: 'an HTTP/2 request handed to application code leaves its context on the bare stream: its log line and bytes are lost',
    find: '  if (ctx !== null) ctx.moveTo(nextReq, nextRes)\n',
    replace: '\n',
    tests: ['test/tls/http2-parity.test.js']
  },
  {
    area: 'architecture',
    file: 'lib/pipeline/request/context.js',
    what: 'a client that is not a trusted proxy chooses its own request id',
    find: "this.requestId = this.fromTrustedProxy ? acceptableRequestId(req.headers['x-request-id']) || newRequestId() : newRequestId()",
    replace: "this.requestId = acceptableRequestId(req.headers['x-request-id']) || newRequestId()",
    tests: ['test/unit/request-id.test.js']
  },
  {
    area: 'architecture',
    file: 'lib/proxy/config.js',
    what: 'the proxy feature registers no warnings: upstream certificates not verified go unmentioned',
    find: '  warnings: proxyTlsWarnings,\n',
    replace: '\n',
    tests: ['test/proxy/tls.test.js']
  }
]
