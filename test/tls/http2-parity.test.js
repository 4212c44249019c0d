'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { makeCertificate, httpsRequest, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')
const { parseCombined, waitForLines } = require('../helpers/access-log')

// Every kind of answer must leave with the same status and headers over
// HTTP/1.1 and HTTP/2, whether svr answers on the bare HTTP/2 stream
// (lib/http2/) or through Node's compatibility objects (application code,
// bodies streamed through an encoder). Left out of the comparison: what
// differs by protocol or by request (hop-by-hop headers, Date, the id).
const IGNORED = new Set(['date', 'x-request-id', 'connection', 'keep-alive', 'transfer-encoding'])

const SMALL = 'x'.repeat(1023) + '\n'
let COMPRESSIBLE = ''
for (let i = 0; COMPRESSIBLE.length < 8000; i++) COMPRESSIBLE += 'compressible line ' + i + '\n'
// Over fileCacheMaxFileSize (1 MiB): sent from a file descriptor.
const LARGE = Buffer.alloc(1536 * 1024, 'large file\n')
const LARGE_TEXT = Buffer.alloc(1536 * 1024, 'large compressible text\n')

const SCRIPT = `
disableEndElseCallbackExecute = true
if (href === '/script') {
  res.setHeader('X-From', 'script')
  res.writeHead(201, { 'Content-Type': 'text/plain', 'Connection': 'keep-alive' })
  res.end('made by the script\\n')
} else {
  elseCallback()
}
`
const MOD = `
module.exports = (req, res, logFacilities, config, next) => {
  if (req.parsedURL.pathname === '/mod') {
    res.setHeader('X-From', 'mod')
    return res.responseEnd('made by the mod')
  }
  next()
}
module.exports.modInfo = { name: 'parity-mod', version: '1.0' }
`

function comparable (headers) {
  const kept = {}
  for (const name of Object.keys(headers).sort()) {
    if (name.charCodeAt(0) !== 58 /* : */ && !IGNORED.has(name)) kept[name] = headers[name]
  }
  return kept
}

async function startSecure (scope, files, config, setup) {
  const server = {}
  const site = await makeSite(scope, {}, files)
  server.dir = site.dir
  const cert = await makeCertificate(site.dir, 'main')
  if (setup !== undefined) await setup(site)
  await site.writeConfig(http2SiteConfig(cert, { logDirectory: 'logs', ...config }))
  server.svr = await startSvr(scope, site.configFile)
  server.client = await connectH2(server.svr.port)
  return server
}

/**
 * Ask both protocols and compare; returns the HTTP/2 answer for the
 * assertions on what the kind must be.
 */
async function bothAlike (server, method, target, headers = {}) {
  const one = await httpsRequest(server.svr.port, target, { method, headers })
  const two = await h2Request(server.client, { ':method': method, ':path': target, ...headers }, { endStream: true })
  assert.equal(two.status, one.status, method + ' ' + target + ': status')
  // The status page counts requests and bytes, which the first of the two
  // answers has moved on: its length may differ by a digit.
  const counts = target.startsWith('/svrjsstatus')
  const fields = (res) => {
    const kept = comparable(res.headers)
    if (counts) delete kept['content-length']
    return kept
  }
  assert.deepEqual(fields(two), fields(one), method + ' ' + target + ': headers')
  if (!counts && one.headers['content-encoding'] === undefined) assert.equal(two.body.length, Buffer.byteLength(one.body, 'latin1'), method + ' ' + target + ': body length')
  return two
}

describe('HTTP/2 answers as HTTP/1.1 does', () => {
  const scope = createScope()
  let plain
  let app
  before(async () => {
    const files = {
      'small.txt': SMALL,
      'page.html': COMPRESSIBLE,
      'large.bin': LARGE,
      'large.txt': LARGE_TEXT,
      'dir/a.txt': 'a\n',
      'dir/b.txt': 'b\n',
      'with-index/index.html': 'index\n'
    }
    plain = await startSecure(scope, files, {
      enableDirectoryListing: true,
      healthPath: '/health',
      customHeaders: { 'X-Site': 'parity', 'X-Path': 'at {path}' },
      nonStandardCodes: [{ scode: 403, url: '/secret' }, { scode: 302, url: '/moved', location: '/small.txt' }]
    })
    app = await startSecure(scope, { 'small.txt': SMALL }, { customHeaders: { 'X-Site': 'parity' } }, async (site) => {
      await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
      await fs.mkdir(path.join(site.dir, 'mods'))
      await fs.writeFile(path.join(site.dir, 'mods', '00-parity.js'), MOD)
    })
  })
  after(async () => {
    for (const server of [plain, app]) if (server) server.client.close()
    await scope.cleanup()
  })

  it('should send a static file held in memory alike', async () => {
    const res = await bothAlike(plain, 'GET', '/small.txt')
    assert.equal(res.status, 200)
    assert.equal(res.body.toString(), SMALL)
    assert.equal(res.headers['content-length'], '1024')
    assert.equal(res.headers['x-path'], 'at /small.txt')
    assert.equal((await bothAlike(plain, 'HEAD', '/small.txt')).headers['content-length'], '1024')
  })

  it('should send a large file from a descriptor alike', async () => {
    const res = await bothAlike(plain, 'GET', '/large.bin')
    assert.equal(res.status, 200)
    assert.ok(res.body.equals(LARGE))
    assert.equal((await bothAlike(plain, 'HEAD', '/large.bin')).headers['content-length'], String(LARGE.length))
  })

  it('should send ranges, 304, 412 and 416 alike', async () => {
    const range = await bothAlike(plain, 'GET', '/large.bin', { range: 'bytes=11-21' })
    assert.equal(range.status, 206)
    assert.equal(range.headers['content-range'], 'bytes 11-21/' + LARGE.length)
    assert.equal(range.body.toString(), 'large file\n')
    assert.equal((await bothAlike(plain, 'GET', '/small.txt', { range: 'bytes=0-9' })).status, 206)
    assert.equal((await bothAlike(plain, 'GET', '/small.txt', { range: 'bytes=5000-' })).status, 416)
    const { headers } = await bothAlike(plain, 'GET', '/small.txt')
    assert.equal((await bothAlike(plain, 'GET', '/small.txt', { 'if-none-match': headers.etag })).status, 304)
    assert.equal((await bothAlike(plain, 'GET', '/large.bin', { 'if-modified-since': new Date(Date.now() + 60000).toUTCString() })).status, 304)
    assert.equal((await bothAlike(plain, 'GET', '/small.txt', { 'if-match': '"other"' })).status, 412)
  })

  it('should send compressed variants alike', async () => {
    const held = await bothAlike(plain, 'GET', '/page.html', { 'accept-encoding': 'gzip' })
    assert.equal(held.headers['content-encoding'], 'gzip')
    assert.equal(held.headers.vary, 'Accept-Encoding')
    // Too large to hold: through an encoder, without a length.
    const streamed = await bothAlike(plain, 'GET', '/large.txt', { 'accept-encoding': 'gzip' })
    assert.equal(streamed.headers['content-encoding'], 'gzip')
    assert.equal(streamed.headers['content-length'], undefined)
  })

  it('should send redirects, error pages, OPTIONS and 405 alike', async () => {
    assert.equal((await bothAlike(plain, 'GET', '/with-index')).headers.location, '/with-index/')
    assert.equal((await bothAlike(plain, 'GET', '/moved')).headers.location, '/small.txt')
    const forbidden = await bothAlike(plain, 'GET', '/secret')
    assert.equal(forbidden.status, 403)
    assert.equal(forbidden.headers['x-content-type-options'], 'nosniff')
    assert.equal((await bothAlike(plain, 'GET', '/missing')).status, 404)
    assert.equal((await bothAlike(plain, 'HEAD', '/missing')).status, 404)
    assert.equal((await bothAlike(plain, 'OPTIONS', '/small.txt')).status, 204)
    const refused = await bothAlike(plain, 'DELETE', '/small.txt')
    assert.equal(refused.status, 405)
    assert.equal(refused.headers.allow, 'GET, HEAD, OPTIONS')
  })

  it('should send listings, the health check and the status page alike', async () => {
    const listing = await bothAlike(plain, 'GET', '/dir/')
    assert.equal(listing.status, 200)
    assert.match(listing.body.toString(), /b\.txt/)
    const health = await bothAlike(plain, 'GET', '/health')
    assert.equal(health.body.toString(), 'ok\n')
    assert.equal((await bothAlike(plain, 'GET', '/svrjsstatus.svr')).status, 200)
  })

  it('should send the answers of the script and of mods alike', async () => {
    const script = await bothAlike(app, 'GET', '/script')
    assert.equal(script.status, 201)
    assert.equal(script.headers['x-from'], 'script')
    assert.equal(script.headers['x-site'], 'parity')
    const mod = await bothAlike(app, 'GET', '/mod')
    assert.equal(mod.body.toString(), 'made by the mod')
    // Past the application code, the built-in stages answer on Node's objects.
    assert.equal((await bothAlike(app, 'GET', '/small.txt')).body.toString(), SMALL)
    assert.equal((await bothAlike(app, 'GET', '/missing')).status, 404)
  })

  it('should log HTTP/2 answers with their id, status and body bytes', async () => {
    const cases = [
      [plain, 'GET', '/small.txt', {}, 200, 1024],
      [plain, 'HEAD', '/small.txt', {}, 200, 0],
      [plain, 'GET', '/large.bin', { range: 'bytes=0-99' }, 206, 100],
      [plain, 'GET', '/missing', {}, 404, null],
      [app, 'GET', '/mod', {}, 200, 15]
    ]
    for (const [server, method, target, headers, status, bytes] of cases) {
      const res = await h2Request(server.client, { ':method': method, ':path': target, ...headers }, { endStream: true })
      const id = res.headers['x-request-id']
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      const log = path.join(server.dir, 'logs', 'access.log')
      let entry
      for (let tries = 0; entry === undefined && tries < 100; tries++) {
        entry = (await waitForLines(log, 1)).map(parseCombined).find((line) => line.requestId === id)
        if (entry === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.equal(entry.request, method + ' ' + target + ' HTTP/2.0')
      assert.equal(entry.status, status)
      assert.equal(entry.bytes, bytes === null ? res.body.length : bytes)
      assert.equal(entry.address, '127.0.0.1')
      assert.equal(entry.aborted, false)
    }
  })
})

describe('HTTP/2 header fields named like members of Object.prototype', () => {
  const scope = createScope()
  let server
  before(async () => {
    server = await startSecure(scope, { 'page.html': COMPRESSIBLE, 'small.txt': SMALL }, {
      // Fields whose names an object with Object.prototype would already
      // hold, and a Vary spelled in lower case that the static writer adds to.
      customHeaders: { constructor: 'c', ['__proto__']: 'p', toString: 't', hasOwnProperty: 'h', vary: 'Origin' }
    })
  })
  after(() => scope.cleanup())

  it('should send each of them as configured, on a file and on an error page', async () => {
    for (const target of ['/page.html', '/small.txt', '/missing']) {
      const res = await bothAlike(server, 'GET', target)
      assert.equal(res.headers.constructor, 'c', target)
      assert.equal(Object.getOwnPropertyDescriptor(res.headers, '__proto__')?.value, 'p', target)
      assert.equal(res.headers.tostring, 't', target)
      assert.equal(res.headers.hasownproperty, 'h', target)
    }
    const compressible = await h2Request(server.client, { ':method': 'GET', ':path': '/page.html', 'accept-encoding': 'gzip' }, { endStream: true })
    assert.equal(compressible.headers.vary, 'Origin, Accept-Encoding')
    assert.equal(compressible.headers['content-encoding'], 'gzip')
  })
})

