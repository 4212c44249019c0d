'use strict'

// Mutations of the area 'request-fields' (see scripts/mutations.js for the
// fields): the per-request work done once per connection or without
// runtime calls, and the Node options of workers.

const FIELDS = ['test/unit/request-fields.property.test.js']
const FLAGS = ['test/unit/worker-flags.test.js']
const LOG = ['test/unit/access-log-format.test.js']
const KNOWN_FIELDS = ['test/unit/known-fields.property.test.js']

module.exports = [
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'the log line keeps the user-less head of the first client address for the next ones',
    find: '      noUserField = addressField + \'-\'\n',
    replace: '',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'the log line keeps the time of its first second',
    find: 'if (clf !== time) {',
    replace: 'if (time === null) {',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'a cut-short response without upstream or rate limit is not marked aborted',
    find: "entry.rateLimit === null && entry.completed ? '\"\\n'",
    replace: "entry.rateLimit === null ? '\"\\n'",
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'the log line keeps the escaped method of the line before when only the protocol changed',
    find: '    if (entry.method !== method) {',
    replace: '    if (entry.method !== method && entry.protocol !== protocol) {',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/request-id.js',
    what: 'request ids lack the UUID version and variant bits',
    find: '      random[first + 6] = (random[first + 6] & 0x0f) | 0x40\n',
    replace: '',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/request-id.js',
    what: 'request ids write each byte\'s high nibble twice',
    find: 'text[at++] = HEX_DIGITS[byte & 15]',
    replace: 'text[at++] = HEX_DIGITS[byte >> 4]',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/request-id.js',
    what: 'a batch of request ids is used once past its end before it is made again',
    find: 'if (this.taken === BATCH) this.refill()',
    replace: 'if (this.taken > BATCH) this.refill()',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/request-id.js',
    what: 'the random bytes are drawn once: every batch of request ids is the same',
    find: '    randomFillSync(random)\n',
    replace: '    if (this.ids === \'\') randomFillSync(random)\n',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/hosts/vhost.js',
    what: 'a connection keeps the Host of its first request: a later request with another Host is named after the first',
    find: '  if (known === undefined || known.raw !== raw) {\n    const normal = normalHost(raw)',
    replace: '  if (known === undefined) {\n    const normal = normalHost(raw)',
    tests: FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/hosts/vhost.js',
    what: 'the last colon is looked for from the second character from the end (a one-digit port is kept in the name)',
    find: 'for (let i = text.length - 1; i >= 0; i--) if (text.charCodeAt(i) === 58',
    replace: 'for (let i = text.length - 2; i >= 0; i--) if (text.charCodeAt(i) === 58',
    tests: FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/application/api/url-object.js',
    what: 'the URL object of a connection keeps the host of its first request',
    find: '  if (known !== undefined && known.raw === raw) return known',
    replace: '  if (known !== undefined) return known',
    tests: FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/application/api/url-object.js',
    what: 'an IPv6 literal without a port has its last group taken for a port',
    find: "  const hasPort = colon !== -1 && host.indexOf(']', colon + 1) === -1",
    replace: '  const hasPort = colon !== -1',
    tests: FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/application/api/legacy-api.js',
    what: 'a dot file (/.htaccess) is given the extension after its dot',
    find: 'return i > 0 && pathname.charCodeAt(i - 1) !== 47 ? pathname.slice(i + 1).toLowerCase() : \'\'',
    replace: 'return pathname.slice(i + 1).toLowerCase()',
    tests: FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'the access log line keeps the User-Agent of the line before when only the User-Agent changed',
    find: '    if (entry.referer !== referer || entry.userAgent !== userAgent) {',
    replace: '    if (entry.referer !== referer) {',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/logging/format.js',
    what: 'the access log line keeps the client address of the first line',
    find: '    if (entry.clientAddress !== address) {',
    replace: '    if (address === null) {',
    tests: LOG
  },
  {
    area: 'request-fields',
    file: 'lib/primary/worker-flags.js',
    what: 'the async context flag is added on Node 24 too, where it is the default',
    find: '  if (major >= FRAME_DEFAULT_MAJOR || !allowed.has(FRAME_FLAG)) return execArgv',
    replace: '  if (!allowed.has(FRAME_FLAG)) return execArgv',
    tests: FLAGS
  },
  {
    area: 'request-fields',
    file: 'lib/primary/worker-flags.js',
    what: 'an operator\'s --no-experimental-async-context-frame in NODE_OPTIONS is overridden',
    find: "  const chosen = [...execArgv, ...String(env.NODE_OPTIONS || '').split(/\\s+/)].some",
    replace: '  const chosen = [...execArgv].some',
    tests: FLAGS
  },
  {
    area: 'request-fields',
    file: 'lib/error-pages/pages.js',
    what: 'an error page\'s Content-Length counted in characters, not bytes (a Host that is not ASCII)',
    find: '    this.byteLength = Buffer.byteLength(text)\n',
    replace: '    this.byteLength = text.length\n',
    tests: ['test/http/error-pages.test.js']
  },
  {
    area: 'request-fields',
    file: 'lib/error-pages/pages.js',
    what: 'every error page handed to Node as latin1, ASCII or not (a Host that is not ASCII)',
    find: "    this.encoding = this.byteLength === text.length ? 'latin1' : 'utf8'",
    replace: "    this.encoding = 'latin1'",
    tests: ['test/http/error-pages.test.js']
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/respond.js',
    what: 'an ASCII page handed as latin1 to a mod that wraps end, which adds characters that are not',
    find: "  else if (page.encoding === 'latin1' && !endWrapped(res)) res.end(page.text, 'latin1')",
    replace: "  else if (page.encoding === 'latin1') res.end(page.text, 'latin1')",
    tests: ['test/http/mod-wrappers.test.js']
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/known-fields.js',
    what: 'a field is stored under its name as given, not its lower-case form',
    find: '      fields[known.lower] = [name, value]',
    replace: '      fields[name] = [name, value]',
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/known-fields.js',
    what: 'a value with a line break is stored without Node\'s check',
    find: "if (typeof value !== 'string' || INVALID_VALUE_CHAR.test(value)) return",
    replace: "if (typeof value !== 'string') return",
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/known-fields.js',
    what: 'a value is remembered as checked before its check',
    find: "      if (typeof value !== 'number' && value !== known.valid) {\n",
    replace: "      if (typeof value !== 'number' && value !== known.valid) {\n        known.valid = value\n",
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/known-fields.js',
    what: 'a field is set after the head was sent',
    find: "      if (this._header || typeof name !== 'string') return super.setHeader",
    replace: "      if (typeof name !== 'string') return super.setHeader",
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/pipeline/request/known-fields.js',
    what: 'getHeader answers the name and value pair instead of the value',
    find: '      return entry === undefined ? undefined : entry[1]',
    replace: '      return entry',
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/util/header-names.js',
    what: 'a cookie\'s value is remembered with the header name',
    find: "    this.remembers = lower !== 'set-cookie'",
    replace: '    this.remembers = true',
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/util/header-names.js',
    what: 'a header name is taken without Node\'s name check',
    find: '    validateHeaderName(name)\n',
    replace: '',
    tests: KNOWN_FIELDS
  },
  {
    area: 'request-fields',
    file: 'lib/http2/stream-request.js',
    what: 'the session\'s peer reads a property TLS sockets do not have: HTTP/2 requests are taken for plain ones (and redirected to HTTPS)',
    find: '    this.encrypted = socket.encrypted === true',
    replace: '    this.encrypted = socket.secure === true',
    tests: ['test/tls/https.test.js']
  },
  {
    area: 'request-fields',
    file: 'lib/hosts/vhost.js',
    what: 'an HTTP/2 session keeps the Host of its first stream: its later streams to another authority get the first one\'s site',
    find: '  if (known === undefined || known.raw !== raw) {\n    const normal = normalHost(raw)\n    known = { raw, normal, hostname: hostnameOf(normal) }',
    replace: '  if (known === undefined) {\n    const normal = normalHost(raw)\n    known = { raw, normal, hostname: hostnameOf(normal) }',
    tests: ['test/tls/http2.test.js']
  }
]
