'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const zlib = require('node:zlib')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { rawRequest } = require('../helpers/raw-http')
const { waitUntil } = require('../helpers/wait')
const { makeCertificate, httpsRequest, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')

const INDEX = '<h1>h2 index</h1>\n'
let BIG = ''
for (let i = 0; BIG.length < 8000; i++) BIG += 'compressible line ' + i + '\n'

// Written for HTTP/1.1: hop-by-hop headers that HTTP/2 forbids.
const SCRIPT = `
disableEndElseCallbackExecute = true
if (href === '/hop') {
  res.setHeader('Connection', 'keep-alive')
  res.writeHead(200, 'Fine', { 'Content-Type': 'text/plain', 'Keep-Alive': 'timeout=5', 'Transfer-Encoding': 'chunked' })
  res.end('host=' + req.headers.host)
} else if (href === '/slow') {
  setTimeout(function () {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end('slow done')
  }, 1500)
} else {
  elseCallback()
}
`

describe('HTTP/2', () => {
  const scope = createScope()
  let svr
  let client
  before(async () => {
    const site = await makeSite(scope, {}, { 'index.html': INDEX, 'big.txt': BIG, 'dir/index.html': 'in dir\n' })
    const cert = await makeCertificate(site.dir, 'main')
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    await site.writeConfig(http2SiteConfig(cert, {
      http2Settings: { initialWindowSize: 1048576 },
      maxRequestBodySize: 1000,
      customHeadersVHost: [{ host: 'a.test', headers: { 'X-Site': 'a' } }, { host: 'b.test', headers: { 'X-Site': 'b' } }]
    }))
    svr = await startSvr(scope, site.configFile)
    client = await connectH2(svr.port)
  })
  after(async () => {
    if (client) client.close()
    await scope.cleanup()
  })

  it('should negotiate h2 by ALPN and send bounded, configured settings', () => {
    assert.equal(client.alpnProtocol, 'h2')
    assert.equal(client.remoteSettings.maxConcurrentStreams, 100)
    assert.equal(client.remoteSettings.initialWindowSize, 1048576)
    assert.equal(client.remoteSettings.maxHeaderListSize, 16384)
  })

  it('should serve a page, an error page and a redirect', async () => {
    const page = await h2Request(client, { ':path': '/' })
    assert.equal(page.status, 200)
    assert.equal(page.body.toString(), INDEX)
    assert.equal(page.headers.server, 'svr')
    const missing = await h2Request(client, { ':path': '/missing' })
    assert.equal(missing.status, 404)
    assert.match(missing.body.toString(), /404 Not Found/)
    const slash = await h2Request(client, { ':path': '/dir' })
    assert.equal(slash.status, 301)
    assert.equal(slash.headers.location, '/dir/')
  })

  it('should compress a static file', async () => {
    const res = await h2Request(client, { ':path': '/big.txt', 'accept-encoding': 'gzip' })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-encoding'], 'gzip')
    assert.equal(zlib.gunzipSync(res.body).toString(), BIG)
  })

  it('should serve ranges and HEAD', async () => {
    const range = await h2Request(client, { ':path': '/big.txt', range: 'bytes=0-9' })
    assert.equal(range.status, 206)
    assert.equal(range.body.toString(), BIG.slice(0, 10))
    const head = await h2Request(client, { ':path': '/', ':method': 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body.length, 0)
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(INDEX)))
  })

  it('should drop hop-by-hop headers a script sets and give it a Host header', async () => {
    const res = await h2Request(client, { ':path': '/hop', ':authority': 'h2.test:8443' })
    assert.equal(res.status, 200)
    assert.equal(res.body.toString(), 'host=h2.test:8443')
    assert.equal(res.headers.connection, undefined)
    assert.equal(res.headers['keep-alive'], undefined)
    assert.equal(res.headers['content-type'], 'text/plain')
  })

  it('should name the site of each stream after its own authority, on one session', async () => {
    // The host is worked out once per connection while it repeats: the
    // streams of one session that change it must not keep the first one.
    const from = svr.output.length
    const sites = []
    for (const authority of ['A.test.:8443', 'b.test', 'a.test', 'c.test', 'B.TEST:8443']) {
      const res = await h2Request(client, { ':path': '/', ':authority': authority })
      assert.equal(res.status, 200)
      sites.push(res.headers['x-site'] || '-')
    }
    assert.deepEqual(sites, ['a', 'b', 'a', '-', 'b'])
    // Read from the session's peer once: every line has the client's address.
    const logged = () => svr.output.slice(from).split('\n').filter((line) => line.includes('"GET / HTTP/2.0" 200 '))
    await waitUntil(() => logged().length === 5, 'five access-log lines')
    for (const line of logged()) assert.match(line, /^127\.0\.0\.1 - - \[/)
  })

  it('should refuse an HTTP/2 CONNECT with an error page', async () => {
    const res = await h2Request(client, { ':method': 'CONNECT', ':authority': 'example.com:443' })
    assert.equal(res.status, 501)
    assert.match(res.body.toString(), /501 Not Implemented/)
  })

  it('should answer plain HTTP on the HTTP/2 port with 497', async () => {
    const res = await rawRequest(svr.port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    assert.equal(res.status, 497)
  })

  it('should still speak HTTP/1.1 on the same port', async () => {
    const res = await httpsRequest(svr.port, '/')
    assert.equal(res.status, 200)
    assert.equal(res.body, INDEX)
    const hop = await httpsRequest(svr.port, '/hop')
    assert.equal(hop.headers.connection, 'keep-alive')
  })

  it('should apply the request limits to both protocols', async () => {
    const bigHead = await httpsRequest(svr.port, '/', { headers: { 'x-big': 'a'.repeat(17000) } })
    assert.equal(bigHead.status, 431)
    const h1Body = await httpsRequest(svr.port, '/', { method: 'POST', headers: { 'content-length': '2000' }, body: 'x'.repeat(2000) })
    assert.equal(h1Body.status, 413)
    const h2Body = await h2Request(client, { ':path': '/', ':method': 'POST', 'content-length': '2000' })
    assert.equal(h2Body.status, 413)
    // The HTTP/2 session survives a refused stream.
    assert.equal((await h2Request(client, { ':path': '/' })).status, 200)
  })

  it('should complete in-flight HTTPS and HTTP/2 requests on SIGTERM', async () => {
    const overH2 = h2Request(client, { ':path': '/slow' })
    const overH1 = httpsRequest(svr.port, '/slow')
    await new Promise((resolve) => setTimeout(resolve, 400))
    svr.signal('SIGTERM')
    const [h2, h1] = await Promise.all([overH2, overH1])
    assert.equal(h2.status, 200)
    assert.equal(h2.body.toString(), 'slow done')
    assert.equal(h1.status, 200)
    assert.equal(h1.body, 'slow done')
    assert.deepEqual(await svr.exited, { code: 0, signal: null })
  })
})

describe('HTTP/2 idle sessions', () => {
  it('should close a session without streams after keepAliveTimeout', async (t) => {
    const client = await idleTestSession(t, 1000)
    assert.equal((await h2Request(client, { ':path': '/' })).status, 200)
    const start = Date.now()
    await sessionClosed(client, 5000)
    const idle = Date.now() - start
    assert.ok(idle >= 800 && idle < 4000, 'closed after ' + idle + ' ms')
  })

  it('should keep a session a client uses more often than keepAliveTimeout, and close it that long after its last response', async (t) => {
    const client = await idleTestSession(t, 1000)
    let goaway = false
    client.on('goaway', () => { goaway = true })
    // Five requests 300 ms apart: the session lives over 1.2 s, past the
    // timeout counted from its start, idle at most 300 ms at a time (a
    // loaded machine has 700 ms to spare).
    const statuses = []
    for (let i = 0; i < 5; i++) {
      if (i !== 0) await new Promise((resolve) => setTimeout(resolve, 300))
      statuses.push((await h2Request(client, { ':path': '/' })).status)
    }
    assert.deepEqual([statuses, goaway], [[200, 200, 200, 200, 200], false])
    const start = Date.now()
    await sessionClosed(client, 5000)
    const idle = Date.now() - start
    assert.ok(idle >= 800 && idle < 4000, 'closed after ' + idle + ' ms')
  })

  it('should keep a session open while a stream outlasts keepAliveTimeout, and serve its next request', async (t) => {
    // /slow answers after 1500 ms: the session is idle for longer than
    // keepAliveTimeout while the stream is open, which must keep it.
    const client = await idleTestSession(t, 400, SCRIPT)
    let goaway = false
    client.on('goaway', () => { goaway = true })
    const slow = await h2Request(client, { ':path': '/slow' })
    assert.equal(slow.status, 200)
    assert.equal(slow.body.toString(), 'slow done')
    assert.equal(goaway, false)
    const next = await h2Request(client, { ':path': '/' })
    assert.equal(next.status, 200)
    // A request with Expect: 100-continue is answered through Node's
    // compatibility layer, not svr's stream objects; its open stream keeps
    // the session as well.
    const expecting = await postAfterContinue(client, '/slow', 'body')
    assert.deepEqual([expecting.status, expecting.body.toString(), goaway], [200, 'slow done', false])
    // Idle now, after timeouts that came while a stream was open: closed all the same.
    await sessionClosed(client, 4000)
    assert.equal(goaway, true)
  })
})

// A one-worker HTTP/2 server with this keepAliveTimeout (and script), and
// a client's session to it.
async function idleTestSession (t, keepAliveTimeout, script = null) {
  const site = await makeSite(t)
  const cert = await makeCertificate(site.dir, 'main')
  if (script !== null) await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script)
  await site.writeConfig({
    workers: 1,
    secure: true,
    enableHTTP2: true,
    disableNonEncryptedServer: true,
    sport: '127.0.0.1:0',
    keepAliveTimeout,
    cert: cert.cert,
    key: cert.key
  })
  const svr = await startSvr(t, site.configFile)
  const client = await connectH2(svr.port)
  t.after(() => client.destroy())
  return client
}

function sessionClosed (client, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('session still open after ' + ms + ' ms')), ms)
    client.once('close', () => { clearTimeout(timer); resolve() })
  })
}

function postAfterContinue (client, target, body) {
  return new Promise((resolve, reject) => {
    const stream = client.request({ ':method': 'POST', ':path': target, expect: '100-continue' })
    const chunks = []
    let head = null
    stream.on('continue', () => stream.end(body))
    stream.on('response', (h) => { head = h })
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('end', () => resolve({ status: head[':status'], body: Buffer.concat(chunks) }))
    stream.on('error', reject)
  })
}
