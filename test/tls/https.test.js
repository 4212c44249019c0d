'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const tls = require('node:tls')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')
const { makeCertificate, httpsRequest, plainPort, connectH2, h2Request } = require('../helpers/tls')

const INDEX = '<h1>secure index</h1>\n'

describe('HTTPS with SNI and the redirecting plain server', () => {
  const scope = createScope()
  let svr
  let port
  let plain
  let certs
  before(async () => {
    const site = await makeSite(scope, {}, { 'index.html': INDEX })
    certs = {
      main: await makeCertificate(site.dir, 'main'),
      alpha: await makeCertificate(site.dir, 'alpha', ['alpha.test']),
      wild: await makeCertificate(site.dir, 'wild', ['*.wild.test'])
    }
    await site.writeConfig({
      workers: 1,
      secure: true,
      enableHTTP2: true,
      sport: '127.0.0.1:0',
      spubport: 8443,
      customHeaders: { 'Strict-Transport-Security': 'max-age=63072000' },
      cert: certs.main.cert,
      key: certs.main.key,
      sni: {
        'alpha.test': { cert: certs.alpha.cert, key: certs.alpha.key },
        '*.wild.test': { cert: certs.wild.cert, key: certs.wild.key }
      }
    })
    svr = await startSvr(scope, site.configFile)
    port = svr.port
    plain = await plainPort(svr)
  })
  after(() => scope.cleanup())

  it('should serve the site over HTTPS, TLS 1.2 or newer', async () => {
    assert.match(svr.origin, /^https:/)
    const res = await httpsRequest(port, '/')
    assert.equal(res.status, 200)
    assert.equal(res.body, INDEX)
    assert.equal(res.fingerprint, certs.main.fingerprint)
    assert.match(res.protocol, /^TLSv1\.[23]$/)
  })

  it('should pick the certificate by server name, wildcards included', async () => {
    assert.equal((await httpsRequest(port, '/', { servername: 'alpha.test' })).fingerprint, certs.alpha.fingerprint)
    assert.equal((await httpsRequest(port, '/', { servername: 'ALPHA.test' })).fingerprint, certs.alpha.fingerprint)
    assert.equal((await httpsRequest(port, '/', { servername: 'shop.wild.test' })).fingerprint, certs.wild.fingerprint)
    // One label only, as in certificates; the apex is not covered either.
    assert.equal((await httpsRequest(port, '/', { servername: 'a.b.wild.test' })).fingerprint, certs.main.fingerprint)
    assert.equal((await httpsRequest(port, '/', { servername: 'wild.test' })).fingerprint, certs.main.fingerprint)
    assert.equal((await httpsRequest(port, '/', { servername: 'other.test' })).fingerprint, certs.main.fingerprint)
  })

  it('should refuse a TLS 1.1 handshake', async () => {
    await assert.rejects(httpsRequest(port, '/', { maxVersion: 'TLSv1.1' }), (err) => {
      assert.match(err.code, /ERR_SSL|EPROTO|ECONNRESET/)
      return true
    })
  })

  it('should redirect plain HTTP to HTTPS on spubport, keeping only known host names', async () => {
    const own = await request(plain, '/a/b?c=d', { headers: { host: 'alpha.test:' + plain } })
    assert.equal(own.status, 301)
    assert.equal(own.headers.location, 'https://alpha.test:8443/a/b?c=d')
    const wild = await request(plain, '/', { headers: { host: 'shop.wild.test' } })
    assert.equal(wild.headers.location, 'https://shop.wild.test:8443/')
    // The address the client connected to is a name of this server too.
    const byIp = await request(plain, '/x', { headers: { host: '127.0.0.1:' + plain } })
    assert.equal(byIp.headers.location, 'https://127.0.0.1:8443/x')
    // The path is sanitized first: the redirect never carries dot segments.
    const dirty = await request(plain, '/a/../b', { headers: { host: 'alpha.test' } })
    assert.equal(dirty.status, 301)
    assert.equal(dirty.headers.location, 'https://alpha.test:8443/b')
  })

  it('should serve HTTP/2 on the TLS port as secure, not redirect it', async () => {
    // Over HTTP/2 whether the request came encrypted is read from the
    // session's peer, once per session, not from the socket per request.
    const client = await connectH2(port)
    try {
      for (let i = 0; i < 2; i++) {
        const res = await h2Request(client, { ':path': '/', ':authority': 'alpha.test:8443' })
        assert.equal(res.status, 200)
        assert.equal(res.body.toString(), INDEX)
      }
    } finally {
      client.close()
    }
  })

  it('should refuse to reflect an unknown Host when no domain is set', async () => {
    const res = await request(plain, '/', { headers: { host: 'evil.example' } })
    assert.equal(res.status, 400)
    assert.equal(res.headers.location, undefined)
    assert.doesNotMatch(res.body, /https:\/\/evil/)
  })

  it('should not proxy CONNECT on the redirecting server', async () => {
    const res = await rawRequest(plain, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    assert.equal(res.status, 501)
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000')
  })

  it('should answer plain HTTP on the TLS port with 497 in cleartext, not hang', async () => {
    const res = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    assert.equal(res.status, 497)
    assert.equal(res.headers.connection, 'close')
    assert.equal(res.headers.server, 'svr')
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000')
    assert.match(res.body, /497 HTTP Request Sent to HTTPS Port/)
  })

  it('should close a connection that sends garbage instead of a handshake', async () => {
    const closed = await new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.alloc(64, 0xff)))
      socket.setTimeout(5000, () => { socket.destroy(); reject(new Error('not closed')) })
      socket.on('error', () => {})
      socket.on('close', () => resolve(true))
      socket.resume()
    })
    assert.equal(closed, true)
  })

  it('should keep serving HTTPS after bad handshakes', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, maxVersion: 'TLSv1.1' })
    await new Promise((resolve) => { socket.on('error', resolve); socket.on('close', resolve) })
    assert.equal((await httpsRequest(port, '/')).status, 200)
  })
})

describe('HTTPS redirect with a domain', () => {
  const scope = createScope()
  let plain
  before(async () => {
    const site = await makeSite(scope)
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({ workers: 1, secure: true, sport: '127.0.0.1:0', domain: 'example.test', cert: cert.cert, key: cert.key })
    plain = await plainPort(await startSvr(scope, site.configFile))
  })
  after(() => scope.cleanup())

  it('should send an unknown Host to the configured domain, with no port for 443', async () => {
    const res = await request(plain, '/p?q', { headers: { host: 'evil.example' } })
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, 'https://example.test/p?q')
    const www = await request(plain, '/p', { headers: { host: 'www.example.test' } })
    assert.equal(www.headers.location, 'https://www.example.test/p')
  })

  it('should redirect HTTP/1.0 without Host to the domain', async () => {
    const res = await rawRequest(plain, 'GET /old HTTP/1.0\r\n\r\n')
    assert.equal(res.status, 301)
    assert.equal(res.headers.location, 'https://example.test/old')
  })
})

describe('secure options', () => {
  it('should serve the site on the plain server with disableToHTTPSRedirect', async (t) => {
    const site = await makeSite(t, {}, { 'index.html': INDEX })
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({ workers: 1, secure: true, sport: '127.0.0.1:0', disableToHTTPSRedirect: true, cert: cert.cert, key: cert.key })
    const svr = await startSvr(t, site.configFile)
    const res = await request(await plainPort(svr), '/')
    assert.equal(res.status, 200)
    assert.equal(res.body, INDEX)
    assert.equal((await httpsRequest(svr.port, '/')).body, INDEX)
  })

  it('should start no plain server with disableNonEncryptedServer', async (t) => {
    const site = await makeSite(t)
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({ workers: 1, secure: true, sport: '127.0.0.1:0', disableNonEncryptedServer: true, cert: cert.cert, key: cert.key })
    const svr = await startSvr(t, site.configFile)
    assert.equal((await httpsRequest(svr.port, '/')).status, 200)
    assert.equal((svr.output.match(/listening on/g) || []).length, 1)
  })

  it('should turn HTTPS on with --secure', async (t) => {
    const site = await makeSite(t)
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({ workers: 1, sport: '127.0.0.1:0', cert: cert.cert, key: cert.key })
    const svr = await startSvr(t, site.configFile, { args: ['--secure'] })
    assert.match(svr.origin, /^https:/)
    assert.equal((await httpsRequest(svr.port, '/')).fingerprint, cert.fingerprint)
  })

  it('should exit 1 naming the key and the file when the certificate is missing', async (t) => {
    const site = await makeSite(t)
    const missing = path.join(site.dir, 'nope.crt')
    await site.writeConfig({ secure: true, sport: '127.0.0.1:0', cert: missing })
    const result = await runSvr(['--config', site.configFile])
    assert.equal(result.code, 1)
    const lines = result.stderr.trim().split('\n')
    assert.equal(lines.length, 1)
    assert.match(lines[0], /\bcert\b/)
    assert.ok(lines[0].includes(missing), lines[0])
    assert.match(lines[0], /no such file/)
    // --check-config reads the certificates as well.
    const checked = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(checked.code, 1)
    assert.ok(checked.stderr.includes(missing), checked.stderr)
  })

  it('should require a client certificate with useClientCertificate, and warn that OCSP stapling is unsupported', async (t) => {
    const site = await makeSite(t)
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({
      workers: 1,
      secure: true,
      sport: '127.0.0.1:0',
      disableNonEncryptedServer: true,
      useClientCertificate: true,
      enableOCSPStapling: true,
      cert: cert.cert,
      key: cert.key
    })
    const svr = await startSvr(t, site.configFile)
    await assert.rejects(httpsRequest(svr.port, '/'))
    assert.match(svr.output, /enableOCSPStapling is not supported/)
  })

  it('should accept any client with rejectUnauthorizedClientCertificates false', async (t) => {
    const site = await makeSite(t)
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig({
      workers: 1,
      secure: true,
      sport: '127.0.0.1:0',
      disableNonEncryptedServer: true,
      useClientCertificate: true,
      rejectUnauthorizedClientCertificates: false,
      cert: cert.cert,
      key: cert.key
    })
    const svr = await startSvr(t, site.configFile)
    assert.equal((await httpsRequest(svr.port, '/')).status, 200)
  })

  it('should refuse a key that does not belong to the certificate', async (t) => {
    const site = await makeSite(t)
    const one = await makeCertificate(site.dir, 'one')
    const two = await makeCertificate(site.dir, 'two')
    await site.writeConfig({ secure: true, sport: '127.0.0.1:0', cert: one.cert, key: two.key })
    const result = await runSvr(['--config', site.configFile])
    assert.equal(result.code, 1)
    assert.ok(result.stderr.includes(two.key), result.stderr)
    assert.match(result.stderr, /SVR_ERR_TLS_FILE|cannot use TLS file/)
  })
})
