'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { packLegacyMod, rawTarGz } = require('../helpers/mods')
const net = require('node:net')

// A 3.x mod: a constructor whose callback returns the request function.
const FIRST_MOD = `
function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback, configJSON, callServerError) {
  return function () {
    if (href === '/first-only') {
      res.end('first mod answered')
      return
    }
    if (href === '/boom') throw new Error('mod failure')
    res.setHeader('X-Chain', 'first')
    elseCallback()
  }
}
module.exports = Mod
`

// A 4.x mod.
const SECOND_MOD = `
module.exports = (req, res, logFacilities, config, next) => {
  res.setHeader('X-Chain', res.getHeader('X-Chain') + ',second')
  if (req.parsedURL.pathname === '/second-only') return res.responseEnd('second mod answered')
  next()
}
module.exports.modInfo = { name: 'second-mod', version: '2.0' }
`

const SCRIPT = "if (href === '/chain') { res.end(res.getHeader('X-Chain') + ',script'); return }\n"

async function siteWithMods (t) {
  const site = await makeSite(t, { workers: 1 })
  const mods = path.join(site.dir, 'mods')
  await fs.mkdir(mods)
  await packLegacyMod(mods, '00-first.tar.gz', FIRST_MOD, { name: 'First', version: '1.0.0' })
  await fs.writeFile(path.join(mods, '01-second.js'), SECOND_MOD)
  await fs.writeFile(path.join(mods, 'README.md'), 'notes, not a mod')
  await fs.writeFile(path.join(mods, 'logo.png'), 'not a mod either')
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
  return { site, mods }
}

describe('mods', () => {
  it('should chain mods in alphabetical order, then the script, then static files', async (t) => {
    const { site } = await siteWithMods(t)
    const svr = await startSvr(t, site.configFile)
    assert.match(svr.output, /application code: First 1\.0\.0, second-mod 2\.0, serverSideScript\.js/)
    assert.match(svr.output, /warn \[primary\] ignoring \S+logo\.png: a mod is a \.tar\.gz/)
    assert.doesNotMatch(svr.output, /README/)
    assert.equal((await request(svr.port, '/chain')).body, 'first,second,script')
    assert.equal((await request(svr.port, '/first-only')).body, 'first mod answered')
    assert.equal((await request(svr.port, '/second-only')).body, 'second mod answered')
    const file = await request(svr.port, '/')
    assert.equal(file.body, '<h1>test index</h1>\n')
    assert.equal(file.headers['x-chain'], 'first,second')
    const status = await request(svr.port, '/svrjsstatus.svr')
    assert.match(status.body, /First 1\.0\.0, second-mod 2\.0, serverSideScript\.js/)
  })

  it('should answer 500 when a mod throws and keep serving', async (t) => {
    const { site } = await siteWithMods(t)
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/boom')
    assert.equal(res.status, 500)
    await svr.waitFor(/First failed on GET \/boom/, 5000)
    assert.equal((await request(svr.port, '/chain')).status, 200)
  })

  it('should run neither mods nor the script with --disable-mods', async (t) => {
    const { site } = await siteWithMods(t)
    const svr = await startSvr(t, site.configFile, { args: ['--disable-mods'] })
    const res = await request(svr.port, '/first-only')
    assert.equal(res.status, 404)
    assert.doesNotMatch(svr.output, /application code/)
  })

  it('should unpack archives once, in <server root>/temp, for every worker, and remove them on exit', async (t) => {
    const site = await makeSite(t, { workers: 2 })
    const mods = path.join(site.dir, 'mods')
    await fs.mkdir(mods)
    // Each process that loads the mod leaves a note beside config.json.
    await packLegacyMod(mods, '00-where.tar.gz', `
      const fs = require('fs')
      function Mod () {
        fs.writeFileSync(__dirname + '/../../../loaded-' + process.pid, __dirname)
      }
      Mod.prototype.callback = function (req, res, c, r, href, e, u, s, d, us, p, h, f, fd, elseCallback) {
        return elseCallback
      }
      module.exports = Mod
    `, { name: 'Where', version: '1' })
    const svr = await startSvr(t, site.configFile)
    const workers = [...svr.workerPids().values()].sort()
    assert.equal(workers.length, 2)
    const notes = (await fs.readdir(site.dir)).filter((name) => name.startsWith('loaded-')).sort()
    assert.deepEqual(notes, workers.map((pid) => 'loaded-' + pid).sort(), 'loaded by each worker, not by the primary')
    const temp = path.join(site.dir, 'temp')
    const unpacked = await fs.readdir(temp)
    assert.equal(unpacked.length, 1, 'unpacked once: ' + unpacked.join(', '))
    assert.match(unpacked[0], new RegExp('^modloader-' + svr.child.pid + '-'))
    const dir = path.join(temp, unpacked[0], '00-where.tar.gz')
    for (const note of notes) assert.equal(await fs.readFile(path.join(site.dir, note), 'utf8'), dir)
    assert.equal((await fs.stat(path.join(temp, unpacked[0]))).mode & 0o777, 0o700)
    svr.signal('SIGTERM')
    assert.deepEqual(await svr.exited, { code: 0, signal: null })
    assert.deepEqual(await fs.readdir(temp), [], 'the unpacked mods were removed')
  })

  for (const [label, prepare, pattern] of [
    ['a broken archive', (mods) => fs.writeFile(path.join(mods, '02-broken.tar.gz'), 'not gzip at all'), /02-broken\.tar\.gz/],
    ['a mod without callback', (mods) => packLegacyMod(mods, '02-nocb.tar.gz', 'module.exports = function Mod () {}\n'), /02-nocb\.tar\.gz.*callback/],
    ['a mod with a syntax error', (mods) => fs.writeFile(path.join(mods, '02-bad.js'), 'module.exports = (\n'), /02-bad\.js.*SyntaxError/]
  ]) {
    it('should refuse to start with ' + label + ', naming the file', async (t) => {
      const { site, mods } = await siteWithMods(t)
      await prepare(mods)
      const result = await runSvr(['--config', site.configFile], { timeout: 15000 })
      assert.equal(result.code, 1)
      assert.match(result.stderr, pattern)
    })
  }

  for (const [label, entryName, message] of [
    ['a .. entry', () => '../../../escaped.txt', "TAR_ENTRY_ERROR: path contains '..'"],
    ['an absolute entry', (site) => path.join(site.dir, 'escaped.txt'), 'TAR_ENTRY_INFO: stripping / from absolute path']
  ]) {
    it('should refuse an archive with ' + label + ' and write nothing out of its directory', async (t) => {
      const site = await makeSite(t, { workers: 1 })
      const mods = path.join(site.dir, 'mods')
      await fs.mkdir(mods)
      const index = 'function Mod () {}\nMod.prototype.callback = function () { return function () {} }\nmodule.exports = Mod\n'
      await fs.writeFile(path.join(mods, '00-evil.tar.gz'), rawTarGz([['index.js', index], [entryName(site), 'escaped']]))
      const result = await runSvr(['--config', site.configFile])
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'mod ' + path.join(mods, '00-evil.tar.gz') + ' failed to load: ' + message + '\n')
      assert.deepEqual((await fs.readdir(site.dir)).sort(), ['config.json', 'mods', 'temp', 'webroot'])
      assert.deepEqual(await fs.readdir(path.join(site.dir, 'temp')), [])
    })
  }

  it('should send absolute-form requests and CONNECT only to mods that can proxy', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const mods = path.join(site.dir, 'mods')
    await fs.mkdir(mods)
    await packLegacyMod(mods, '00-proxy.tar.gz', PROXY_MOD, { name: 'Proxy', version: '1' })
    await fs.writeFile(path.join(mods, '01-plain.js'), "module.exports = (req, res) => res.end('plain mod')\n")
    const svr = await startSvr(t, site.configFile)
    const proxied = await request(svr.port, 'http://example.test/some/path?q=1')
    assert.equal(proxied.status, 200)
    assert.equal(proxied.body, 'proxied http://example.test/some/path?q=1')
    const other = await request(svr.port, 'http://example.test/other')
    assert.equal(other.status, 501, 'a plain mod never sees proxy requests')
    assert.equal((await request(svr.port, '/x')).body, 'plain mod')
    assert.match(await rawExchange(svr.port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n'), /^HTTP\/1\.1 200 Connection Established\r\n\r\ntunnel to example\.test:443/)
    assert.match(await rawExchange(svr.port, 'CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\n\r\n'), /^HTTP\/1\.1 501 /)
  })

  it('should apply the block list to proxy requests and CONNECT', async (t) => {
    const site = await makeSite(t, { workers: 1, blacklist: ['127.0.0.1', '::1'] })
    const mods = path.join(site.dir, 'mods')
    await fs.mkdir(mods)
    await packLegacyMod(mods, '00-proxy.tar.gz', PROXY_MOD, { name: 'Proxy', version: '1' })
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, 'http://example.test/some/path')).status, 403)
    assert.match(await rawExchange(svr.port, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n'), /^HTTP\/1\.1 403 /)
  })
})

// Answers proxy requests for example.test and opens a fake tunnel on CONNECT.
const PROXY_MOD = `
function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback) {
  return function () {
    if (req.url.startsWith('http://example.test/some/')) res.end('proxied ' + req.url)
    else elseCallback()
  }
}
Mod.prototype.proxyCallback = function (req, socket, head, configJSON, serverconsole, elseCallback) {
  return function () {
    if (req.url !== 'example.test:443') return elseCallback()
    socket.end('HTTP/1.1 200 Connection Established\\r\\n\\r\\ntunnel to ' + req.url)
  }
}
module.exports = Mod
`

function rawExchange (port, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text))
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => { data += chunk })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')))
  })
}
