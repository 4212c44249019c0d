'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream } = require('../helpers/upstream')
const { makeCertificate } = require('../helpers/tls')
const { waitUntil } = require('../helpers/access-log')

// What the https upstream saw: the server name of the TLS handshake
// (false without SNI) and the Host header.
function reportServername (req, res) {
  res.setHeader('Content-Type', 'application/json')
  res.end(JSON.stringify({ servername: req.socket.servername, host: req.headers.host }))
}

// The reason a request failed, from the worker's error log line.
async function failureReason (svr, res) {
  const line = await svr.waitFor(new RegExp('request ' + res.headers['x-request-id'] + ': upstream \\S+ failed: (\\S+):'))
  return line[1]
}

describe('proxy TLS to https upstreams', () => {
  it('should verify the upstream against the route\'s CA and server name, never the client\'s Host', async (t) => {
    const site = await makeSite(t)
    // Two self-signed certificates for the same names: only the one the upstream has is its CA.
    const cert = await makeCertificate(site.dir, 'upstream', ['upstream.test', '127.0.0.1'])
    await makeCertificate(site.dir, 'other', ['upstream.test', '127.0.0.1'])
    const upstream = await startUpstream(t, { tls: cert, handler: reportServername })
    const impostor = await startUpstream(t, { tls: await makeCertificate(site.dir, 'impostor', ['127.0.0.1']) })
    const route = (path, extra) => ({ path, upstreams: [upstream.origin], retries: 0, ...extra })
    await site.writeConfig({
      workers: 1,
      proxy: [
        route('/default'),
        route('/ca', { tls: { ca: 'upstream.crt' } }),
        route('/other-ca', { tls: { ca: ['other.crt'] } }),
        route('/wrong-name', { tls: { ca: cert.cert, servername: 'wrong.test' } }),
        route('/right-name', { tls: { ca: cert.cert, servername: 'upstream.test' } }),
        route('/host-kept', { preserveHost: true, tls: { ca: cert.cert } }),
        route('/insecure', { tls: { rejectUnauthorized: false } }),
        route('/retried', { upstreams: [impostor.origin, upstream.origin], retries: 1, tls: { ca: cert.cert } })
      ]
    })
    const svr = await startSvr(t, site.configFile)
    let handshakes = 0
    upstream.server.on('secureConnection', () => handshakes++)
    const answer = async (target, headers) => {
      const res = await request(svr.port, target, { headers })
      return res.status === 200 ? [200, JSON.parse(res.body)] : [res.status, await failureReason(svr, res)]
    }
    // Node.js's CA store does not know a self-signed certificate.
    assert.deepEqual(await answer('/default'), [502, 'DEPTH_ZERO_SELF_SIGNED_CERT'])
    // An upstream written as an IP address gets no SNI, and its certificate is checked against the address.
    assert.deepEqual(await answer('/ca'), [200, { servername: false, host: '127.0.0.1:' + upstream.port }])
    assert.deepEqual(await answer('/other-ca'), [502, 'DEPTH_ZERO_SELF_SIGNED_CERT'])
    assert.deepEqual(await answer('/wrong-name'), [502, 'ERR_TLS_CERT_ALTNAME_INVALID'])
    assert.deepEqual(await answer('/right-name'), [200, { servername: 'upstream.test', host: '127.0.0.1:' + upstream.port }])
    // The client's Host goes upstream, but is neither sent as SNI nor checked against the certificate.
    assert.deepEqual(await answer('/host-kept', { Host: 'client.example' }), [200, { servername: false, host: 'client.example' }])
    // Nor does another client's Host make undici open a new connection for a new server name.
    const before = handshakes
    assert.deepEqual(await answer('/host-kept', { Host: 'other.example' }), [200, { servername: false, host: 'other.example' }])
    assert.equal(handshakes - before, 0)
    assert.deepEqual(await answer('/insecure'), [200, { servername: false, host: '127.0.0.1:' + upstream.port }])
    // A certificate that does not verify fails before the request is sent: the next upstream gets it.
    let tried = 0
    impostor.server.on('connection', () => tried++)
    assert.deepEqual(await answer('/retried'), [200, { servername: false, host: '127.0.0.1:' + upstream.port }])
    assert.equal(tried, 1)
    // Said once, by the primary.
    const warning = site.configFile + ': /proxy/6/tls/rejectUnauthorized: the certificates of ' + upstream.origin +
      ' are not verified; anyone on the way to them can read and change the traffic (give their CA in tls.ca instead)\n'
    assert.deepEqual(svr.output.split('\n').filter((line) => line.includes('rejectUnauthorized')).map((line) => line.replace(/^\S+ /, '') + '\n'),
      ['warn [primary] ' + warning])
  })

  it('should run the primary\'s health checks with the route\'s TLS settings', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const cert = await makeCertificate(site.dir, 'upstream', ['upstream.test'])
    const checks = []
    const upstream = await startUpstream(t, {
      tls: cert,
      handler: (req, res) => {
        if (req.headers['user-agent'] === 'svr-health-check') checks.push(req.socket.servername)
        reportServername(req, res)
      }
    })
    await site.writeConfig({
      workers: 1,
      proxy: [{
        path: '/',
        upstreams: [upstream.origin],
        tls: { ca: cert.cert, servername: 'upstream.test' },
        healthCheck: { path: '/health', interval: 100, timeout: 1000, fall: 1, rise: 1 }
      }]
    })
    const svr = await startSvr(t, site.configFile)
    await waitUntil(() => checks.length >= 3, 'the health checks did not reach the upstream: ' + svr.output)
    assert.deepEqual(checks.slice(0, 3), ['upstream.test', 'upstream.test', 'upstream.test'])
    const res = await request(svr.port, '/app')
    assert.deepEqual([res.status, JSON.parse(res.body).servername], [200, 'upstream.test'])
    assert.equal(svr.output.includes('unhealthy'), false, svr.output)
  })

  it('should refuse a CA file that is missing or holds no certificate, naming its JSON pointer', async (t) => {
    const site = await makeSite(t)
    await makeCertificate(site.dir, 'upstream', ['upstream.test'])
    await fs.writeFile(path.join(site.dir, 'not-a-cert.pem'), 'not a certificate\n')
    await site.writeConfig({
      proxy: [
        { path: '/a', upstreams: ['https://127.0.0.1:8443'], tls: { ca: 'missing.pem' } },
        { path: '/b', upstreams: ['https://127.0.0.1:8443'], tls: { ca: ['upstream.crt', 'not-a-cert.pem'] } }
      ]
    })
    const lines = [
      site.configFile + ': /proxy/0/tls/ca: ' + path.join(site.dir, 'missing.pem') + ' is not a readable PEM file of certificates (ENOENT)',
      site.configFile + ': /proxy/1/tls/ca/1: ' + path.join(site.dir, 'not-a-cert.pem') + ' is not a readable PEM file of certificates (ERR_OSSL_PEM_NO_START_LINE)'
    ]
    const checked = await runSvr(['--config', site.configFile, '--check-config'])
    assert.deepEqual([checked.code, checked.stdout, checked.stderr.trimEnd().split('\n')], [1, '', lines])
    // A start is refused the same way.
    const started = await runSvr(['--config', site.configFile])
    assert.deepEqual([started.code, started.stderr.trimEnd().split('\n')], [1, lines])
  })

  it('should read the CA files again on reload, and refuse a reload whose CA file is missing', async (t) => {
    const site = await makeSite(t)
    const cert = await makeCertificate(site.dir, 'upstream', ['127.0.0.1'])
    const other = await makeCertificate(site.dir, 'other', ['127.0.0.1'])
    const live = path.join(site.dir, 'live.crt')
    await fs.copyFile(cert.cert, live)
    const upstream = await startUpstream(t, { tls: cert, handler: reportServername })
    const config = (ca) => ({ workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin], tls: { ca } }] })
    await site.writeConfig(config('live.crt'))
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/')).status, 200)

    await site.writeConfig(config('missing.pem'))
    let from = svr.output.length
    svr.signal('SIGHUP')
    // An access-log line of the worker may come between the two lines of the primary.
    const refused = await svr.waitFor(/error \[primary\] (.*)\n(?:.*\n)*?.*error \[primary\] reload refused: the old configuration stays in use/, 10000, from)
    assert.equal(refused[1], site.configFile + ': /proxy/0/tls/ca: ' + path.join(site.dir, 'missing.pem') +
      ' is not a readable PEM file of certificates (ENOENT)')
    assert.equal((await request(svr.port, '/')).status, 200)

    // The same configuration, another CA in its file: the new workers trust that one only.
    await site.writeConfig(config('live.crt'))
    await fs.copyFile(other.cert, live)
    from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 20000, from)
    assert.equal((await request(svr.port, '/')).status, 502)
  })
})
