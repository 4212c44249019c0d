'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

const SCRIPT = `
if (href === '/socket') {
  disableEndElseCallbackExecute = true
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify({
    real: req.socket.realRemoteAddress === undefined ? 'unset' : req.socket.realRemoteAddress,
    realPort: req.socket.realRemotePort === undefined ? 'unset' : req.socket.realRemotePort,
    original: req.socket.originalRemoteAddress === undefined ? 'unset' : req.socket.originalRemoteAddress
  }))
}
`

// The webroot is the directory of config.json, so that /config.json is a
// forbidden path whose 403 is logged with the client address.
async function startSite (scope, config) {
  const site = await makeSite(scope, { wwwroot: '.', ...config }, {})
  await fs.writeFile(path.join(site.dir, 'index.html'), 'index')
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
  return startSvr(scope, site.configFile)
}

function get (port, target, xff) {
  return request(port, target, { headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })
}

describe('client address behind a trusted proxy', () => {
  const scope = createScope()
  let svr

  before(async () => {
    svr = await startSite(scope, {
      workers: 1,
      enableIPSpoofing: true,
      trustedProxies: ['127.0.0.1'],
      blacklist: ['203.0.113.66'],
      allowStatus: true,
      statusAllow: ['198.51.100.20']
    })
  })
  after(() => scope.cleanup())

  it('should apply the block list to the forwarded client', async () => {
    assert.equal((await get(svr.port, '/', '203.0.113.66')).status, 403)
    assert.equal((await get(svr.port, '/', '203.0.113.67')).status, 200)
    assert.equal((await get(svr.port, '/')).status, 200)
  })

  it('should walk from the right past trusted hops only', async () => {
    assert.equal((await get(svr.port, '/', '203.0.113.66, 127.0.0.1')).status, 403)
    // The leftmost entry is whatever the client sent; the proxy appended the real one.
    assert.equal((await get(svr.port, '/', '203.0.113.66, 198.51.100.1')).status, 200)
  })

  it('should use the resolved address for the status page', async () => {
    assert.equal((await get(svr.port, '/svrjsstatus.svr', '198.51.100.20')).status, 200)
    assert.equal((await get(svr.port, '/svrjsstatus.svr', '198.51.100.21')).status, 404)
  })

  it('should log the resolved address', async () => {
    const from = svr.output.length
    assert.equal((await get(svr.port, '/config.json', '198.51.100.30')).status, 403)
    await svr.waitFor(/403 for \/config\.json from 198\.51\.100\.30/, 5000, from)
  })

  it('should show mods and scripts the SVR.JS socket fields', async () => {
    const forwarded = JSON.parse((await get(svr.port, '/socket', '198.51.100.40')).body)
    assert.equal(forwarded.real, '198.51.100.40')
    assert.equal(forwarded.realPort, null)
    assert.equal(forwarded.original, '127.0.0.1')
  })
})

describe('client address from an untrusted peer', () => {
  const scope = createScope()
  let port

  before(async () => {
    port = (await startSite(scope, {
      workers: 1,
      enableIPSpoofing: true,
      trustedProxies: ['10.0.0.1'],
      blacklist: ['localhost', '203.0.113.66']
    })).port
  })
  after(() => scope.cleanup())

  it('should ignore X-Forwarded-For and judge the peer', async () => {
    assert.equal((await get(port, '/', '8.8.8.8')).status, 403)
    assert.equal((await get(port, '/', '203.0.113.66')).status, 403)
  })
})

describe('client address behind a proxy on a Unix socket', () => {
  const scope = createScope()
  let socketPath

  before(async () => {
    const site = await makeSite(scope, {}, { 'index.html': 'index' })
    socketPath = path.join(site.dir, 'svr.sock')
    await site.writeConfig({ workers: 1, port: socketPath, enableIPSpoofing: true, trustedProxies: ['localhost'], blacklist: ['203.0.113.66'] })
    await startSvr(scope, site.configFile)
  })
  after(() => scope.cleanup())

  it('should believe the socket peer when "localhost" is trusted', async () => {
    const blocked = await request(0, '/', { socketPath, headers: { 'x-forwarded-for': '203.0.113.66' } })
    assert.equal(blocked.status, 403)
    const other = await request(0, '/', { socketPath, headers: { 'x-forwarded-for': '203.0.113.67' } })
    assert.equal(other.status, 200)
  })
})

describe('enableIPSpoofing without trustedProxies', () => {
  const scope = createScope()
  let svr

  before(async () => {
    svr = await startSite(scope, { workers: 2, enableIPSpoofing: true, blacklist: ['203.0.113.66'] })
  })
  after(() => scope.cleanup())

  it('should warn once at boot and ignore X-Forwarded-For', async () => {
    assert.equal((await get(svr.port, '/', '203.0.113.66')).status, 200)
    const warnings = svr.output.match(/enableIPSpoofing has no effect without trustedProxies/g) || []
    assert.equal(warnings.length, 1)
    const socket = JSON.parse((await get(svr.port, '/socket', '203.0.113.66')).body)
    assert.equal(socket.real, 'unset')
  })
})
