'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, runSvr } = require('../helpers/server')

describe('proxy configuration', () => {
  it('should name the JSON pointer of every bad upstream and route', async (t) => {
    const site = await makeSite(t, {
      proxy: [
        { path: '/api', upstreams: ['http://127.0.0.1:3000', 'ftp://127.0.0.1', 'http://u:p@127.0.0.1:1', 'http://127.0.0.1:1/app', 'unix:app.sock', 'nonsense', 'h2c://127.0.0.1:50051/grpc', 'h2c://'] },
        { path: 'api', upstreams: [], policy: 'fastest', healthCheck: { path: 'health' }, http2: 'yes' }
      ]
    })
    const { code, stdout, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 1)
    assert.equal(stdout, '')
    const file = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      file + '/proxy/0/upstreams/1: scheme must be http, https or h2c, not "ftp"',
      file + '/proxy/0/upstreams/2: must not carry credentials (set an Authorization header in requestHeaders)',
      file + '/proxy/0/upstreams/3: must be an origin without path, query or fragment',
      file + '/proxy/0/upstreams/4: a Unix socket upstream must be "unix:" and an absolute path',
      file + '/proxy/0/upstreams/5: must be "http://host:port", "https://host:port", "h2c://host:port" or "unix:/path.sock"',
      file + '/proxy/0/upstreams/6: must be an origin without path, query or fragment',
      file + '/proxy/0/upstreams/7: must be "http://host:port", "https://host:port", "h2c://host:port" or "unix:/path.sock"',
      file + '/proxy/1/path: must start with "/"',
      file + '/proxy/1/upstreams: must NOT have fewer than 1 items',
      file + '/proxy/1/policy: must be one of round-robin, least-connections, client-hash, random-two, cookie',
      file + '/proxy/1/http2: must be boolean (got string)',
      file + '/proxy/1/healthCheck/path: must start with "/"'
    ])
  })

  it('should name the JSON pointer of every bad upstream object, and refuse a route of backups only', async (t) => {
    const site = await makeSite(t, {
      proxy: [
        {
          path: '/a',
          upstreams: [{ url: 'ftp://127.0.0.1' }, { url: 'http://127.0.0.1:1', weight: 0 }, { weight: 2 },
            { url: 'http://127.0.0.1:2', backup: 'yes', maxConnections: -1, port: 3 }, 'http://127.0.0.1:1']
        },
        { path: '/b', upstreams: [{ url: 'http://127.0.0.1:4', backup: true }], cookie: { name: 'a b' }, maxConnections: -1, slowStart: 'soon' }
      ]
    })
    const { code, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 1)
    const file = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      file + '/proxy/0/upstreams/0/url: scheme must be http, https or h2c, not "ftp"',
      file + '/proxy/0/upstreams/1/weight: must be >= 1 (got 0)',
      file + '/proxy/0/upstreams/2: missing required key "url"',
      file + '/proxy/0/upstreams/3: unknown key "port"',
      file + '/proxy/0/upstreams/3/backup: must be boolean (got string)',
      file + '/proxy/0/upstreams/3/maxConnections: must be >= 0 (got -1)',
      file + '/proxy/1/cookie/name: must be a cookie name (letters, digits and !#$%&\'*+.^_`|~-)',
      file + '/proxy/1/maxConnections: must be >= 0 (got -1)',
      file + '/proxy/1/slowStart: must be integer (got string)',
      file + '/proxy/0/upstreams/4: "http://127.0.0.1:1" is listed twice (give it a `weight` instead)',
      file + '/proxy/1/upstreams: every upstream is a backup; at least one must not be (backups serve only while the others are down)'
    ])
  })

  it('should name the JSON pointer of every bad tls setting', async (t) => {
    const site = await makeSite(t, {
      proxy: [
        { path: '/a', upstreams: ['https://127.0.0.1:8443'], tls: { servername: '10.0.0.5', rejectUnauthorized: 'no', cert: 'client.crt' } },
        { path: '/b', upstreams: ['https://127.0.0.1:8443'], tls: { servername: 'app.internal:8443', ca: [] } },
        { path: '/c', upstreams: ['https://127.0.0.1:8443'], tls: { ca: '' } },
        { path: '/d', upstreams: ['https://127.0.0.1:8443'], tls: { servername: 'app.internal.' } }
      ]
    })
    const { code, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 1)
    const file = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      file + '/proxy/0/tls: unknown key "cert"',
      file + '/proxy/0/tls/servername: must be a host name: an IP address is not sent as a server name (RFC 6066); null checks the certificate against the upstream\'s address',
      file + '/proxy/0/tls/rejectUnauthorized: must be boolean (got string)',
      file + '/proxy/1/tls/ca: must NOT have fewer than 1 items',
      file + '/proxy/1/tls/servername: must be a host name such as "app.internal", without scheme, port or trailing dot',
      file + '/proxy/2/tls/ca: must NOT have fewer than 1 characters',
      file + '/proxy/3/tls/servername: must be a host name such as "app.internal", without scheme, port or trailing dot'
    ])
  })

  it('should accept http, https, h2c and unix-socket upstreams', async (t) => {
    const site = await makeSite(t, {
      proxy: [{ path: '/', host: 'app.example', upstreams: ['http://127.0.0.1:3000', 'https://[::1]:8443/', 'h2c://127.0.0.1:50051', 'unix:/run/app.sock'], healthCheck: {}, http2: true }]
    })
    const { code, stdout, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 0, stderr)
    assert.equal(stdout, 'configuration OK: ' + site.configFile + '\n')
  })
})
