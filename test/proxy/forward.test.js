'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http2 = require('node:http2')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { makeCertificate } = require('../helpers/tls')
const { startUpstream } = require('../helpers/upstream')

async function proxied (t, routes, config = {}) {
  const site = await makeSite(t, { workers: 1, proxy: routes, ...config })
  return startSvr(t, site.configFile)
}

describe('proxy routing', () => {
  it('should route by path prefix and host, and strip the prefix', async (t) => {
    const api = await startUpstream(t, { name: 'api' })
    const app = await startUpstream(t, { name: 'app' })
    const svr = await proxied(t, [
      { path: '/api', stripPrefix: true, upstreams: [api.origin] },
      { path: '/', host: 'app.example', upstreams: [app.origin] }
    ])
    const cases = [
      ['/api/users?page=2', 'localhost', 'api', '/users?page=2'],
      ['/api', 'localhost', 'api', '/'],
      ['/api/', 'app.example', 'api', '/'],
      ['/docs/a%20b', 'app.example', 'app', '/docs/a%20b'],
      ['/', 'APP.example.', 'app', '/']
    ]
    for (const [target, host, name, url] of cases) {
      const res = await request(svr.port, target, { headers: { host } })
      assert.equal(res.status, 200, target)
      const seen = JSON.parse(res.body)
      assert.equal(seen.name, name, target)
      assert.equal(seen.url, url, target)
    }
    // Not a route: a prefix must end at a segment, and app.example's route is its own.
    assert.equal((await request(svr.port, '/apis')).status, 404)
    assert.equal((await request(svr.port, '/docs/x', { headers: { host: 'other.example' } })).status, 404)
    assert.equal(api.hits + app.hits, 5)
  })

  it('should forward to a Unix-socket upstream', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const upstream = await startUpstream(t, { name: 'sock', socketPath: path.join(site.dir, 'app.sock') })
    await site.writeConfig({ workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/x')
    assert.equal(res.status, 200)
    assert.deepEqual([JSON.parse(res.body).name, JSON.parse(res.body).headers.host], ['sock', 'localhost'])
  })

  it('should protect proxied paths with the blocklist, access rules and Basic auth', async (t) => {
    const upstream = await startUpstream(t)
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }], {
      nonStandardCodes: [{ url: '/secret', scode: 403 }, { regex: '/^\\/admin/', scode: 401 }],
      users: [{ name: 'admin', pass: 'ab'.repeat(32), salt: 'y' }]
    })
    assert.equal((await request(svr.port, '/secret')).status, 403)
    const unauthorized = await request(svr.port, '/admin/panel')
    assert.equal(unauthorized.status, 401)
    assert.equal(unauthorized.headers['www-authenticate'], 'Basic realm="Restricted area", charset="UTF-8"')
    assert.equal(upstream.hits, 0)
    assert.equal((await request(svr.port, '/open')).status, 200)
    assert.equal(upstream.hits, 1)
  })
})

describe('proxy headers', () => {
  it('should drop hop-by-hop fields both ways and set forwarding fields from the socket peer', async (t) => {
    const upstream = await startUpstream(t, {
      handler (req, res) {
        res.writeHead(200, { Connection: 'keep-alive, X-Internal', 'X-Internal': 'secret', 'Keep-Alive': 'timeout=5', 'X-App': 'yes', Server: 'app/1.0' })
        res.end(JSON.stringify(req.headers))
      }
    })
    const svr = await proxied(t, [{
      path: '/',
      upstreams: [upstream.origin],
      requestHeaders: { 'X-Added': 'on', 'User-Agent': null },
      responseHeaders: { 'X-App': null, 'Strict-Transport-Security': 'max-age=60' }
    }])
    const res = await request(svr.port, '/x', {
      headers: {
        host: 'site.example:8080',
        connection: 'X-Hop, keep-alive',
        'x-hop': 'gone',
        'keep-alive': 'timeout=9',
        te: 'gzip',
        'proxy-authorization': 'Basic abc',
        'user-agent': 'tester',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil.example',
        forwarded: 'for=6.6.6.6',
        'x-real-ip': '6.6.6.6',
        'x-request-id': 'spoofed',
        'x-kept': 'end-to-end'
      }
    })
    assert.equal(res.status, 200)
    const seen = JSON.parse(res.body)
    assert.deepEqual(seen, {
      host: '127.0.0.1:' + upstream.port,
      'x-kept': 'end-to-end',
      'x-forwarded-for': '127.0.0.1',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'site.example:8080',
      forwarded: 'for=127.0.0.1;proto=http;host="site.example:8080"',
      via: '1.1 svr',
      'x-request-id': res.headers['x-request-id'],
      'x-added': 'on',
      connection: 'keep-alive'
    })
    assert.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    assert.equal(res.headers['x-internal'], undefined)
    assert.equal(res.headers['keep-alive'], 'timeout=5')
    assert.equal(res.headers['x-app'], undefined)
    assert.equal(res.headers['strict-transport-security'], 'max-age=60')
    assert.equal(res.headers.server, 'svr')
    assert.equal(res.headers.via, '1.1 svr')
  })

  it('should drop the one field a single-token Connection names, both ways', async (t) => {
    const upstream = await startUpstream(t, {
      handler (req, res) {
        res.writeHead(200, { Connection: 'X-Only', 'X-Only': 'secret', 'X-App': 'yes' })
        res.end(JSON.stringify(req.headers))
      }
    })
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }])
    const res = await request(svr.port, '/x', { headers: { connection: 'X-Solo', 'x-solo': 'gone', 'x-kept': 'yes' } })
    assert.equal(res.status, 200)
    const seen = JSON.parse(res.body)
    assert.deepEqual([seen['x-solo'], seen['x-kept']], [undefined, 'yes'])
    assert.deepEqual([res.headers['x-only'], res.headers['x-app']], [undefined, 'yes'])
  })

  it('should pass on the trustedProxies chain and the client\'s Host with preserveHost', async (t) => {
    const upstream = await startUpstream(t)
    const svr = await proxied(t, [{ path: '/', preserveHost: true, upstreams: [upstream.origin] }], {
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1', '10.0.0.0/8']
    })
    const res = await request(svr.port, '/', {
      headers: { host: 'app.example', 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 10.1.2.3', 'x-forwarded-proto': 'https', 'x-request-id': 'edge-42' }
    })
    const seen = JSON.parse(res.body).headers
    assert.equal(seen.host, 'app.example')
    assert.equal(seen['x-forwarded-for'], '203.0.113.9, 10.1.2.3, 127.0.0.1')
    // The client's protocol, as the trusted proxy in front reported it, in both fields.
    assert.equal(seen.forwarded, 'for=203.0.113.9, for=10.1.2.3, for=127.0.0.1;proto=https;host=app.example')
    assert.equal(seen['x-forwarded-proto'], 'https')
    // The client as the trusted chain names it, whatever the client wrote.
    assert.equal(seen['x-real-ip'], '203.0.113.9')
    const spoofed = await request(svr.port, '/', { headers: { host: 'app.example', 'x-real-ip': '6.6.6.6', 'x-forwarded-for': '198.51.100.7' } })
    assert.equal(JSON.parse(spoofed.body).headers['x-real-ip'], '198.51.100.7')
    assert.equal(seen['x-request-id'], 'edge-42')
    // A forwarded host that is no token goes into Forwarded as a quoted-string.
    const odd = await request(svr.port, '/', { headers: { host: 'app.example', 'x-forwarded-host': 'we"ird\\host' } })
    assert.equal(JSON.parse(odd.body).headers.forwarded, 'for=127.0.0.1;proto=http;host="we\\"ird\\\\host"')
  })

  it('should answer Expect: 100-continue itself and stream the body on', async (t) => {
    const upstream = await startUpstream(t)
    const svr = await proxied(t, [{ path: '/', upstreams: [upstream.origin] }])
    const res = await rawRequest(svr.port, 'POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nhello')
    assert.match(res.raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/)
    // The upstream's answer, relayed chunked: one chunk of JSON.
    const seen = JSON.parse(/\r\n(\{.*\})\r\n0\r\n\r\n$/s.exec(res.raw)[1])
    assert.equal(seen.length, 5)
    assert.equal(seen.headers.expect, undefined)
  })

  it('should proxy an HTTP/2 client to an HTTP/1.1 upstream', async (t) => {
    const upstream = await startUpstream(t)
    const site = await makeSite(t, { workers: 1 })
    const tls = await makeCertificate(site.dir, 'server')
    await site.writeConfig({
      workers: 1, secure: true, enableHTTP2: true, sport: '127.0.0.1:0', disableNonEncryptedServer: true, cert: tls.cert, key: tls.key,
      proxy: [{ path: '/', upstreams: [upstream.origin] }]
    })
    const svr = await startSvr(t, site.configFile)
    const session = http2.connect('https://localhost:' + svr.port, { rejectUnauthorized: false })
    t.after(() => session.close())
    const { headers, body } = await new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': '/h2?x=1', 'x-kept': 'yes' })
      let data = ''
      let head = null
      stream.on('response', (h) => { head = h })
      stream.on('data', (chunk) => { data += chunk })
      stream.on('end', () => resolve({ headers: head, body: data }))
      stream.on('error', reject)
      stream.end('abc')
    })
    assert.equal(headers[':status'], 200)
    const seen = JSON.parse(body)
    assert.equal(seen.url, '/h2?x=1')
    assert.equal(seen.length, 3)
    assert.equal(seen.headers['x-kept'], 'yes')
    assert.equal(seen.headers['x-forwarded-proto'], 'https')
    assert.equal(seen.headers.via, '2 svr')
    assert.equal(seen.headers['x-forwarded-host'], 'localhost:' + svr.port)
  })
})
