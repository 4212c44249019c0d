'use strict'

// Mutations of the area 'proxy' (see scripts/mutations.js for the fields).

const NET = 'test/proxy/safety-net.test.js'

const FAILURES = 'test/proxy/failures.test.js'
const STICKY = 'test/proxy/stickiness.test.js'
const DAY_TWO = 'test/proxy/day-two.test.js'
const RESTARTS = 'test/proxy/restarts.test.js'

module.exports = [
  // Issue #28: what never reached an upstream, lone and all-out upstreams, stickiness, headers
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'a POST whose connection was refused (not a byte sent) is not retried',
    find: '!(sentNothing || (this.idempotent && failure.unreached))',
    replace: '!(this.idempotent && failure.unreached)',
    tests: [NET, FAILURES]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'passive health takes a route\'s last upstream out',
    find: '|| this.downUntil > now || last)',
    replace: '|| this.downUntil > now)',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/select.js',
    what: 'no half-open pass: a route whose upstreams are all out answers 503 without trying them',
    find: ' ?? pickFrom(route, tried, key, now, false)',
    replace: '',
    tests: [FAILURES]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'a lone application restarted is shut out for failTimeout after it is back',
    find: '|| this.downUntil > now || last)',
    replace: '|| this.downUntil > now)',
    tests: [RESTARTS]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/member.js',
    what: 'weights ignored',
    find: '    if (this.slowStart === 0) return this.weight\n',
    replace: '    if (this.slowStart === 0) return 1\n',
    tests: [DAY_TWO]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/routes.js',
    what: 'backups in rotation with the primaries',
    find: '[members.filter((member) => !member.backup), members.filter((member) => member.backup)]',
    replace: '[members]',
    tests: [DAY_TWO]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/member.js',
    what: 'maxConnections off by one: one request more than the limit in flight',
    find: 'return this.upstream.inFlight < this.limit',
    replace: 'return this.upstream.inFlight <= this.limit',
    tests: [DAY_TWO]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/member.js',
    what: 'every worker takes all of maxConnections',
    find: 'return Math.max(1, Math.floor(max / workers))',
    replace: 'return max',
    tests: [DAY_TWO]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/exchange-start.js',
    what: 'a client that left the queue is still sent upstream',
    find: '    exchange.route.queue.remove(exchange)\n',
    replace: '',
    tests: [DAY_TWO]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/balance.js',
    what: 'client-hash by modulo: every client moves when one upstream leaves',
    find: 'function rendezvous (candidates, clientHash, now) {\n',
    replace: 'function rendezvous (candidates, clientHash, now) {\n  if (candidates.length !== 0) return candidates[clientHash % candidates.length]\n',
    tests: [STICKY]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'the cookie policy sets its cookie on every answer',
    find: 'route.cookie !== null && this.key !== this.member.id',
    replace: 'route.cookie !== null',
    tests: [STICKY]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'no X-Real-IP from the trusted chain',
    find: "    out['x-real-ip'] = chain[0]\n",
    replace: '',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Forwarded proto= from svr\'s own socket while X-Forwarded-Proto keeps the trusted proxy\'s',
    find: 'out.forwarded = forwardedElements(chain, forwardedHost, proto)',
    replace: "out.forwarded = forwardedElements(chain, forwardedHost, ctx.secure ? 'https' : 'http')",
    tests: [NET]
  },
  // What may be sent to a second upstream (lib/proxy/forward.js, failures.js)
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'POST is retried on the next upstream like an idempotent method',
    find: "'TRACE', 'PUT', 'DELETE'])",
    replace: "'TRACE', 'PUT', 'DELETE', 'POST'])",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'an idempotent request with a body is retried (its body was read once and is gone)',
    find: '!withBody && IDEMPOTENT.has(req.method)',
    replace: 'IDEMPOTENT.has(req.method)',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/request-body.js',
    what: 'hasBody ignores Transfer-Encoding: a chunked body is not forwarded and the request is retried',
    find: "return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined",
    replace: "return length !== undefined && length !== '0'",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/request-body.js',
    what: 'Content-Length: 0 taken for a body, so an empty PUT whose connection broke is not retried',
    find: "(length !== undefined && length !== '0')",
    replace: '(length !== undefined)',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'a failure after the upstream had the request (no answer in time, not HTTP) is retried elsewhere',
    find: '(this.idempotent && failure.unreached)',
    replace: 'this.idempotent',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'one retry fewer than `retries` says',
    find: 'this.attempts > route.retries',
    replace: 'this.attempts >= route.retries',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/failures.js',
    what: 'a first-byte timeout counts as unreached, so the request runs twice',
    find: "'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT'])",
    replace: "'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT'])",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/failures.js',
    what: 'a connection reset before any answer byte is not retried',
    find: "'ECONNREFUSED', 'ECONNRESET', ",
    replace: "'ECONNREFUSED', ",
    tests: [NET]
  },
  // What counts against an upstream (forward.js, upstream.js, upstreams.js)
  {
    area: 'proxy',
    file: 'lib/proxy/exchange-start.js',
    what: 'a client that hangs up before the answer is not noted, and its aborted exchange counts against the upstream',
    find: '  exchange.clientGone = true\n',
    replace: '',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/forward.js',
    what: 'a client that hangs up while the answer streams counts as the upstream breaking it off',
    find: 'const failed = err !== null && err !== CLIENT_LEFT',
    replace: 'const failed = err !== null',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/worker/client-error.js',
    what: 'a client that half-closes mid-body is not noticed: the proxy exchange waits until the upstream gives up, which counts against it',
    find: "if (err.code !== 'HPE_INVALID_EOF_STATE') return false",
    replace: 'return false',
    tests: [NET, 'test/http/post-data.test.js']
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'a success does not clear the failures before it',
    find: 'if (this.failures.length !== 0) this.failures = []',
    replace: '',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'failures older than failWindow still count',
    find: 'this.failures.filter((time) => time > since)',
    replace: 'this.failures.slice()',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'an upstream is taken out one failure after maxFails',
    find: 'failures.length < rule.maxFails',
    replace: 'failures.length <= rule.maxFails',
    tests: [NET, 'test/proxy/failures.test.js']
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'an upstream is taken out for failWindow instead of failTimeout',
    find: 'this.downUntil = now + rule.failTimeout',
    replace: 'this.downUntil = now + rule.failWindow',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstream.js',
    what: 'maxFails: 0 does not turn passive health off',
    find: '    if (rule.maxFails === 0) return false\n',
    replace: '',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstreams.js',
    what: 'the metrics count a failed exchange as a success',
    find: 'this.metrics.observe(upstream.name, ok, seconds)',
    replace: 'this.metrics.observe(upstream.name, true, seconds)',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/upstreams.js',
    what: 'the status page counts no failed exchange',
    find: '      upstream.errors++\n',
    replace: '',
    tests: [NET]
  },
  // Forwarding fields a client may not choose (lib/proxy/headers.js)
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'X-Forwarded-Proto believed from a client that is not a trusted proxy',
    find: "trusted && typeof incoming['x-forwarded-proto'] === 'string'",
    replace: "typeof incoming['x-forwarded-proto'] === 'string'",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'X-Forwarded-Host believed from a client that is not a trusted proxy',
    find: "trusted && typeof incoming['x-forwarded-host'] === 'string'",
    replace: "typeof incoming['x-forwarded-host'] === 'string'",
    tests: [NET, 'test/proxy/forward.test.js']
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'the client\'s X-Forwarded-Host passed on when the request has no Host to make one from',
    find: "'x-forwarded-host', 'forwarded',",
    replace: "'forwarded',",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'the client\'s X-Forwarded-For appended to, as nginx\'s $proxy_add_x_forwarded_for does',
    find: "out['x-forwarded-for'] = chain.join(', ')",
    replace: "out['x-forwarded-for'] = (typeof incoming['x-forwarded-for'] === 'string' ? incoming['x-forwarded-for'] + ', ' : '') + chain.join(', ')",
    tests: [NET, 'test/proxy/forward.test.js']
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'a Forwarded field the client sent is kept instead of svr\'s own',
    find: 'out.forwarded = forwardedElements(',
    replace: 'out.forwarded = incoming.forwarded || forwardedElements(',
    tests: [NET]
  },
  // Hop-by-hop fields of an upstream's answer (lib/proxy/headers.js)
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Trailer is not hop-by-hop',
    find: "'te', 'trailer', ",
    replace: "'te', ",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Transfer-Encoding is not hop-by-hop: an HTTP/1.0 client gets chunks',
    find: "'transfer-encoding', 'upgrade',",
    replace: "'upgrade',",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Proxy-Authenticate is not hop-by-hop',
    find: "'proxy-authenticate', ",
    replace: '',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Upgrade is not hop-by-hop',
    find: "'upgrade', 'http2-settings'",
    replace: "'http2-settings'",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Keep-Alive is not hop-by-hop',
    find: "new Set(['connection', 'keep-alive', ",
    replace: "new Set(['connection', ",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'Connection is not hop-by-hop: the upstream\'s "close" closes the client\'s connection',
    find: "new Set(['connection', 'keep-alive', ",
    replace: "new Set(['keep-alive', ",
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/headers.js',
    what: 'the fields a Connection header of several names lists are passed on',
    find: '    if (named !== null && named.has(name)) continue\n',
    replace: '',
    tests: [NET, 'test/proxy/forward.test.js']
  },
  // Active health checks (lib/proxy/health-service.js)
  {
    area: 'proxy',
    file: 'lib/proxy/health-service.js',
    what: 'of two checks of one upstream, the last one\'s verdict wins, so a passing route keeps a failing upstream in',
    find: "out[checker.name] = (out[checker.name] !== false) && checker.healthy",
    replace: 'out[checker.name] = checker.healthy',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/health-service.js',
    what: 'fall and rise swapped',
    find: '(this.healthy ? this.check.fall : this.check.rise)',
    replace: '(this.healthy ? this.check.rise : this.check.fall)',
    tests: [NET]
  },
  {
    area: 'proxy',
    file: 'lib/proxy/exchange-start.js',
    what: 'an exchange started for a client that already left holds its upstream connection for good',
    find: '  if (clientGone(exchange.res)) {',
    replace: '  if (false) {',
    tests: [DAY_TWO]
  }
]
