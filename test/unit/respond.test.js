'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const os = require('node:os')
const { createResponder, reasonPhrase } = require('../../lib/pipeline/request/respond')

// Just enough of ServerResponse for the responder.
class FakeResponse {
  constructor () {
    this.headers = new Map()
    this.statusCode = 200
    this.headersSent = false
    this.destroyed = false
    this.body = null
  }

  setHeader (name, value) { this.headers.set(name.toLowerCase(), value) }
  getHeader (name) { return this.headers.get(name.toLowerCase()) }
  hasHeader (name) { return this.headers.has(name.toLowerCase()) }
  removeHeader (name) { this.headers.delete(name.toLowerCase()) }
  destroy () { this.destroyed = true }
  end (body) {
    this.body = body === undefined ? '' : String(body)
    this.headersSent = true
  }
}

function responder (config = {}) {
  const warnings = []
  const errors = []
  const options = {
    config: {
      wwwroot: os.tmpdir() + '/svr-respond-no-such-root-' + process.pid,
      errorPages: [],
      page404: '404.html',
      serverAdministratorEmail: 'root@example.org',
      stackHidden: true,
      exposeModsInErrorPages: false,
      fileCacheTtl: 1000,
      ...config
    }
  }
  const shared = { serverString: 'svr', log: { warn: (msg) => warnings.push(msg), error: (msg) => errors.push(msg) } }
  const { sendError, redirect } = createResponder(options, shared)
  return {
    sendError: (req, res, ...rest) => sendError(contextOf(req, res), ...rest),
    redirect: (req, res, ...rest) => redirect(contextOf(req, res), ...rest),
    warnings,
    errors
  }
}

// Just enough of a request's context: no site (the fallback templates
// apply) and no `{path}` headers to set.
function contextOf (req, res) {
  return { req, res, site: null, requestId: 'req-1', pathHeadersSet: true }
}

function fakeRequest (url = '/x', method = 'GET') {
  return { url, method, headers: { host: 'h.test' }, socket: { localAddress: '127.0.0.1' } }
}

describe('createResponder', () => {
  it('should cut the connection when the headers are already out, and log why', async () => {
    const res = new FakeResponse()
    res.headersSent = true
    const { sendError, errors } = responder()
    await sendError(fakeRequest(), res, 500, { error: new TypeError('late') })
    assert.equal(res.destroyed, true)
    assert.equal(res.body, null)
    assert.equal(res.statusCode, 200, 'the status the client got stays')
    assert.deepEqual(errors, ['request req-1: 500 (TypeError: late) after the headers of a 200 response were sent; the response is cut short'])
  })

  it('should leave a response that was complete as sent, and log why no page went out', async () => {
    const res = new FakeResponse()
    res.headersSent = true
    res.writableEnded = true
    const { sendError, errors } = responder()
    await sendError(fakeRequest(), res, 500, { error: new TypeError('after the answer') })
    assert.equal(res.destroyed, false, 'cutting it could lose what is still buffered')
    assert.equal(res.body, null)
    assert.deepEqual(errors, ['request req-1: 500 (TypeError: after the answer) after the headers of a 200 response were sent; that response was complete and stays as sent'])
  })

  it('should send a 500 through the class\'s methods when a wrapper on the response fails', async () => {
    const res = new FakeResponse()
    let calls = 0
    res.end = function () {
      calls++
      throw new RangeError('Maximum call stack size exceeded')
    }
    const { sendError, errors } = responder()
    await sendError(fakeRequest(), res, 404)
    assert.equal(calls, 1)
    assert.equal(res.statusCode, 500)
    assert.match(res.body, /<title>500 Internal Server Error<\/title>/)
    assert.equal(Object.hasOwn(res, 'end'), false, 'the wrapper is taken away')
    assert.equal(errors.length, 1)
    assert.match(errors[0], /^request req-1: application code that wrapped the response \(end\) failed while svr answered through it:$/)
  })

  it('should not hide a failure when nothing of the application stood in front of the response', async () => {
    class BrokenResponse extends FakeResponse {
      end () { throw new TypeError('a mistake of svr\'s own') }
    }
    const { sendError, errors } = responder()
    await assert.rejects(async () => sendError(fakeRequest(), new BrokenResponse(), 404), /a mistake of svr's own/)
    assert.deepEqual(errors, [])
  })

  it('should drop the headers of the representation the page replaces, but keep the caller\'s', async () => {
    const res = new FakeResponse()
    for (const name of ['ETag', 'Last-Modified', 'Content-Encoding', 'Content-Range', 'Accept-Ranges']) res.setHeader(name, 'x')
    await responder().sendError(fakeRequest(), res, 416, { headers: { 'Content-Range': 'bytes */10' } })
    assert.equal(res.statusCode, 416)
    assert.equal(res.getHeader('etag'), undefined)
    assert.equal(res.getHeader('last-modified'), undefined)
    assert.equal(res.getHeader('content-encoding'), undefined)
    assert.equal(res.getHeader('accept-ranges'), undefined)
    assert.equal(res.getHeader('content-range'), 'bytes */10')
    assert.equal(res.getHeader('content-length'), Buffer.byteLength(res.body))
  })

  it('should show a stack only when stackHidden is off, escaped', async () => {
    const err = new Error('bad <thing>')
    const hidden = new FakeResponse()
    await responder().sendError(fakeRequest(), hidden, 500, { error: err })
    assert.ok(hidden.body.includes('[error stack hidden]'))
    assert.ok(!hidden.body.includes('bad'))
    const shown = new FakeResponse()
    await responder({ stackHidden: false }).sendError(fakeRequest(), shown, 500, { error: err })
    assert.ok(shown.body.includes('Error: bad &lt;thing&gt;<br/>'))
    const none = new FakeResponse()
    await responder({ stackHidden: false }).sendError(fakeRequest(), none, 500, { error: null })
    assert.equal(none.statusCode, 500)
  })

  it('should use a description in place of the standard sentence, escaped', async () => {
    const res = new FakeResponse()
    await responder().sendError(fakeRequest(), res, 403, { description: 'Listing <off>.' })
    assert.ok(res.body.includes('<p>Listing &lt;off&gt;.</p>'))
    assert.ok(!res.body.includes('You are not allowed'))
  })

  it('should obfuscate the contact address', async () => {
    const res = new FakeResponse()
    await responder().sendError(fakeRequest(), res, 503)
    assert.ok(res.body.includes('root[at]example[dot]org'))
    assert.ok(!res.body.includes('root@example.org'))
  })

  it('should send no body for HEAD and 501 for an unknown code', async () => {
    const res = new FakeResponse()
    await responder().sendError(fakeRequest('/x', 'HEAD'), res, 299)
    assert.equal(res.statusCode, 501)
    assert.equal(res.body, '')
    assert.ok(res.getHeader('content-length') > 0)
  })

  it('should redirect with an escaped link', () => {
    const res = new FakeResponse()
    responder().redirect(fakeRequest(), res, '/a?b="c"&d', 302)
    assert.equal(res.statusCode, 302)
    assert.equal(res.getHeader('location'), '/a?b="c"&d')
    assert.ok(res.body.includes('href="/a?b=&quot;c&quot;&amp;d"'))
  })

  it('should write the page at once when its templates were looked up a moment ago', async () => {
    const { sendError } = responder()
    const first = new FakeResponse()
    const pending = sendError(fakeRequest(), first, 404)
    assert.equal(first.body, null, 'the first answer waits for the template lookups')
    await pending
    assert.match(first.body, /404 Not Found/)
    const second = new FakeResponse()
    assert.equal(sendError(fakeRequest(), second, 404), undefined)
    assert.equal(second.body, first.body)
  })

  it('should know the non-standard reason phrases', () => {
    assert.equal(reasonPhrase(599), 'Network Connect Timeout Error')
    assert.equal(reasonPhrase(404), 'Not Found')
  })
})
