'use strict'

// Mutations of the area 'http2-logging' (see scripts/mutations.js for the fields).

const RESET = ['test/tls/http2-reset.test.js']
const BYTES = ['test/tls/http2-reset.test.js', 'test/tls/http2-parity.test.js']
const SINK = ['test/unit/log-sink-reopen.test.js', 'test/unit/log-sink.test.js']
const IDLE = ['test/tls/http2.test.js']

module.exports = [
  {
    area: 'http2-logging',
    file: 'lib/http2/streams.js',
    what: 'the idle timer is not restarted when the last open stream closes: a session is closed keepAliveTimeout after it opened, under a client that keeps using it',
    find: '    if (--this.open === 0 && this.timer !== null) this.timer.refresh()\n',
    replace: '    --this.open\n',
    tests: [...IDLE, 'test/unit/http2-idle.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/streams.js',
    what: 'a keepAliveTimeout above the longest timer delay is given to setTimeout as it is, which makes it 1 ms: every HTTP/2 session is closed at once',
    find: '    this.timer = setTimeout(closeIfIdle, Math.min(timeout, MAX_TIMER_MS), this)\n',
    replace: '    this.timer = setTimeout(closeIfIdle, timeout, this)\n',
    tests: ['test/unit/http2-idle.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/streams.js',
    what: 'a closed session\'s timer is left running: a stream closing after the session restarts it',
    find: '    clearTimeout(this.timer)\n    this.timer = null\n',
    replace: '',
    tests: ['test/unit/http2-idle.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/streams.js',
    what: 'the idle timer closes a session with a stream open',
    find: '  if (streams.open === 0) streams.session.close()\n',
    replace: '  streams.session.close()\n',
    tests: [...IDLE, 'test/unit/http2-idle.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a stream is not counted open: a session whose response takes longer than keepAliveTimeout is closed under it',
    find: '    if (openStreams !== null) openStreams.opened()\n',
    replace: '',
    tests: IDLE
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a closed stream stays counted open: an idle session is never closed',
    find: '  if (res.openStreams !== null) res.openStreams.closed()\n',
    replace: '',
    tests: IDLE
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/streams.js',
    what: 'a stream answered by Node\'s compatibility layer (Expect: 100-continue) is not counted open',
    find: '      if (streams !== null) countCompatStream(stream, streams)\n',
    replace: '',
    tests: IDLE
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a header value is remembered as valid before it is checked: the second time, a line break goes through',
    find: '      validateHeaderValue(name, value)\n      if (typeof value === \'string\') known.remember(value)\n',
    replace: '      if (typeof value === \'string\') known.remember(value)\n      validateHeaderValue(name, value)\n',
    tests: ['test/tls/http2-stream-headers.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a stream the client reset after the head is logged as completed (the reset code not looked at)',
    find: 'res.writableFinished = res.writableEnded && this.rstCode === NO_ERROR',
    replace: 'res.writableFinished = res.writableEnded',
    tests: RESET
  },
  {
    area: 'http2-logging',
    file: 'lib/pipeline/request/response-bytes.js',
    what: 'a response counts as completed once it was ended, not once it finished (a reset download logged as delivered)',
    find: 'ctx.completed = this.writableFinished',
    replace: 'ctx.completed = this.writableEnded',
    tests: RESET
  },
  {
    area: 'http2-logging',
    file: 'lib/pipeline/request/response-bytes.js',
    what: 'a body handed over in one end() whose write failed (the client hung up) is logged as completed; Node before 24 emits its \'finish\' (caught on Node 20 and 22)',
    find: 'this.writableFinished && (ctx.socket === null || ctx.socket.errored === null)',
    replace: 'this.writableFinished',
    tests: ['test/ops/access-log-bytes.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a range sent from disk on the bare stream counts the bytes before the range too',
    find: '    countSentBytes(this, length)\n    fs.open(',
    replace: '    countSentBytes(this, offset + length)\n    fs.open(',
    tests: BYTES
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'an answer held in memory logs no body bytes on the bare stream',
    find: '    countSentBytes(this, length)\n    if (length === 0',
    replace: '    if (length === 0',
    tests: BYTES
  },
  {
    area: 'http2-logging',
    file: 'lib/pipeline/request/response-bytes.js',
    what: 'a HEAD over HTTP/2 logs the bytes of the body it did not send',
    find: '  else if (!hasBody(ctx.method, ctx.status)) ctx.bytes = 0\n',
    replace: '\n',
    tests: BYTES
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/sink.js',
    what: 'a batch is written as latin1 whatever its lines: a line of events that is not ASCII is written in the wrong bytes',
    find: "    return this.wideLines === 0 ? 'latin1' : 'utf8'\n",
    replace: "    return 'latin1'\n",
    tests: SINK
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/sink.js',
    what: 'a batch of part of the queue forgets the lines that are not ASCII behind it, and the next batch writes them as latin1',
    find: '    if (all) this.wideLines = 0\n',
    replace: '    this.wideLines = 0\n',
    tests: SINK
  },
  {
    area: 'http2-logging',
    file: 'lib/pipeline/request/response-bytes.js',
    what: 'the connection\'s count leaves out the bytes queued behind a cork (a pipelined response\'s start is marked too early)',
    find: "  if (typeof dispatched === 'number' && socket.writableLength === 0 && socket._pendingData === null) return dispatched\n",
    replace: "  if (typeof dispatched === 'number') return dispatched\n",
    tests: ['test/unit/response-bytes.test.js', 'test/ops/access-log-bytes.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/format.js',
    what: 'a status application code set to a string after the head went is written into the line unescaped',
    find: "  return typeof status === 'number' ? status + ' ' : escapeBareLogValue(String(status)) + ' '\n",
    replace: "  return status + ' '\n",
    tests: ['test/unit/access-log-format.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/access-log.js',
    what: 'the access log vouches for lines of any format as ASCII: a JSON line with a UTF-8 User-Agent is written as latin1',
    find: "    this.asciiLines = typeof this.format === 'function' && this.format.ascii === true\n",
    replace: '    this.asciiLines = true\n',
    tests: ['test/unit/access-log-format.test.js']
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/sink.js',
    what: 'reopen (SIGUSR1) leaves the descriptor of the rotated file open',
    find: '    if (this.fd !== -1) this.retired.push(this.fd)\n',
    replace: '\n',
    tests: SINK
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/sink.js',
    what: 'a descriptor retired while a write to it was in flight is never closed',
    find: '      this.writing = false\n      this.closeRetired()\n',
    replace: '      this.writing = false\n',
    tests: SINK
  },
  {
    area: 'http2-logging',
    file: 'lib/logging/sink.js',
    what: 'reopen closes the old descriptor under a write in flight to it',
    find: '    if (!this.writing) this.closeRetired()\n',
    replace: '    this.closeRetired()\n',
    tests: SINK
  },
  {
    area: 'http2-logging',
    file: 'lib/http2/stream-response.js',
    what: 'a closed stream keeps its response (and through it the request\'s context) for as long as Node keeps the stream',
    find: '  this[kResponse] = null\n',
    replace: '',
    tests: ['test/unit/stream-response-release.test.js']
  }
]
