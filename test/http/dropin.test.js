'use strict'

// SVR.JS 3.x scripts and mods find the environment they had under SVR.JS:
// the webroot as working directory, `<server root>/temp` as a script's
// __dirname, the server root at a mod's `__dirname + "/../../.."`, and
// svr's own packages through require().

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { packLegacyMod } = require('../helpers/mods')
const { EXAMPLE_SCRIPT, CONFIG_MOD } = require('../helpers/svrjs-code')
const { parseCombined, waitForLines, waitUntil } = require('../helpers/access-log')

// Relative paths against the working directory (the webroot), a helper
// loaded as SVR.JS's documentation advises, and a package svr ships.
const CWD_SCRIPT = `
if (href === '/list') {
  var list = JSON.parse(fs.readFileSync('data/list.json', 'utf8'))
  var helper = require(process.cwd() + '/helper.js')
  res.writeHead(200, { 'Content-Type': require('mime-types').contentType('json') })
  res.end(JSON.stringify({ list: list, helper: helper.greet('svr'), cwd: process.cwd() }))
  return
}
`

const CWD_FILES = {
  'index.html': '<h1>test index</h1>\n',
  'data/list.json': '["a","b"]',
  'helper.js': "exports.greet = (name) => 'hello ' + name + ' from ' + require('path').basename(__filename)\n"
}

async function withScript (t, script, files, args = []) {
  const site = await makeSite(t, { workers: 1 }, files)
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script)
  return { site, svr: await startSvr(t, site.configFile, { args }) }
}

async function withConfigMod (t, settings, args = []) {
  const site = await makeSite(t, { workers: 1 })
  const mods = path.join(site.dir, 'mods')
  await fs.mkdir(mods)
  await packLegacyMod(mods, '00-x.tar.gz', CONFIG_MOD, { name: 'X', version: '1.0.0' })
  if (settings !== undefined) await fs.writeFile(path.join(site.dir, 'x-config.json'), JSON.stringify(settings))
  return { site, svr: await startSvr(t, site.configFile, { args }) }
}

// Every file below `dir`, relative, except those under the skipped names.
async function filesUnder (dir, skip = []) {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath || entry.path, entry.name)))
    .filter((rel) => !skip.some((name) => rel === name || rel.startsWith(name + path.sep)))
    .sort()
}

for (const [mode, args] of [['cluster', []], ['--single-threaded', ['--single-threaded']]]) {
  describe('SVR.JS 3.x environment (' + mode + ')', () => {
    it('runs a script written like SVR.JS\'s example: a counter under __dirname/../temp and a proxy to itself', async (t) => {
      const { site, svr } = await withScript(t, EXAMPLE_SCRIPT, { 'index.html': '<h1>test index</h1>\n', 'page.txt': 'proxied page\n' }, args)
      for (const expected of [0, 1, 2]) {
        const res = await request(svr.port, '/hello.svr')
        assert.equal(res.status, 200)
        assert.equal(res.body, 'Hello World! This page was visited ' + expected + ' times.')
      }
      assert.equal(await fs.readFile(path.join(site.dir, 'temp', 'requestCounter'), 'utf8'), '2')
      const proxied = await request(svr.port, '/proxy.svr/this/page.txt')
      assert.equal(proxied.status, 200)
      assert.equal(proxied.body, 'proxied page\n')
      assert.equal(proxied.headers['content-type'], 'text/plain; charset=utf-8')
    })

    it('runs a script with the webroot as working directory and svr\'s packages in reach', async (t) => {
      const { site, svr } = await withScript(t, CWD_SCRIPT, CWD_FILES, args)
      const res = await request(svr.port, '/list')
      assert.equal(res.status, 200, res.body)
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      assert.deepEqual(JSON.parse(res.body), {
        list: ['a', 'b'],
        helper: 'hello svr from helper.js',
        cwd: await fs.realpath(site.webroot)
      })
    })

    it('gives a 3.x mod the server root at __dirname/../../..: it reads its settings beside config.json', async (t) => {
      const { site, svr } = await withConfigMod(t, { upstream: 'http://127.0.0.1:1' }, args)
      const res = await request(svr.port, '/x-settings')
      assert.equal(res.status, 200, res.body)
      assert.deepEqual(JSON.parse(res.body), { settings: { upstream: 'http://127.0.0.1:1' }, mime: 'text/css' })
      assert.equal(await fs.readFile(path.join(site.dir, 'x-config.json'), 'utf8'), '{"upstream":"http://127.0.0.1:1"}')
    })

    it('lets a 3.x mod create its missing settings file beside config.json and nowhere else', async (t) => {
      const { site, svr } = await withConfigMod(t, undefined, args)
      const res = await request(svr.port, '/x-settings')
      assert.equal(res.status, 200, res.body)
      assert.deepEqual(JSON.parse(res.body), { settings: {}, mime: 'text/css' })
      assert.equal(await fs.readFile(path.join(site.dir, 'x-config.json'), 'utf8'), '{}')
      // Besides what the test wrote, only the settings file and the unpacked mod.
      assert.deepEqual(await filesUnder(site.dir, ['temp', 'webroot', 'mods']), ['config.json', 'x-config.json'])
      assert.deepEqual(await filesUnder(site.webroot), ['index.html'])
    })
  })
}

const API_SCRIPT = `
if (href === '/twice') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.writeHead(500, { 'Content-Type': 'text/html' })
  res.end('answered once')
  return
}
if (href === '/host') {
  res.end(req.headers.host)
  return
}
if (href === '/headers') {
  res.setHeader('X-Set-By-Script', 'not configured')
  res.end(JSON.stringify(getCustomHeaders()))
  return
}
if (href === '/cut') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write('partial')
  setTimeout(function () { throw new Error('failure after the headers') }, 20)
  return
}
if (href === '/late-error') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.write('partial')
  setTimeout(function () { callServerError(500, new Error('too late for a page')) }, 20)
  return
}
`

// Reads until the server closes; a response cut short ends in an error.
function truncatedRequest (port, target) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode, body, complete: res.complete }))
      res.on('error', () => resolve({ status: res.statusCode, body, complete: false }))
      res.on('aborted', () => {})
    })
    req.on('error', (err) => resolve({ error: err.code }))
  })
}

describe('SVR.JS 3.x script API details', () => {
  const headersConfig = {
    customHeaders: { 'Strict-Transport-Security': 'max-age=63072000', 'X-Path': 'at {path}' },
    maxRequestBodySize: 1024
  }

  it('ignores a second writeHead with a warning instead of throwing', async (t) => {
    const { svr } = await withScript(t, API_SCRIPT)
    const res = await request(svr.port, '/twice')
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'text/plain')
    assert.equal(res.body, 'answered once')
    await svr.waitFor(new RegExp('warn \\[worker 1\\] request ' + res.headers['x-request-id'] +
      ': writeHead\\(500\\) after the headers were sent is ignored, as SVR.JS did'))
    assert.doesNotMatch(svr.output, /ERR_HTTP_HEADERS_SENT/)
  })

  it('shows the script the Host header lower-cased and without trailing dots, port kept', async (t) => {
    const { svr } = await withScript(t, API_SCRIPT)
    assert.equal((await request(svr.port, '/host', { headers: { Host: 'WWW.Example.COM.:8080' } })).body, 'www.example.com:8080')
    assert.equal((await request(svr.port, '/host', { headers: { Host: 'Example.org..' } })).body, 'example.org')
    assert.equal((await request(svr.port, '/host', { headers: { Host: '[::1]:80' } })).body, '[::1]:80')
  })

  it('getCustomHeaders() returns the configured headers and Server, nothing else', async (t) => {
    const site = await makeSite(t, { workers: 1, ...headersConfig })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), API_SCRIPT)
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/headers?q=1')
    assert.deepEqual(JSON.parse(res.body), {
      'Strict-Transport-Security': 'max-age=63072000',
      'X-Path': 'at /headers?q=1',
      Server: 'svr'
    })
  })

  it('puts Server and the custom headers on answers made before the pipeline', async (t) => {
    const site = await makeSite(t, { workers: 1, ...headersConfig })
    const svr = await startSvr(t, site.configFile)
    const tooLarge = await request(svr.port, '/upload', { method: 'POST', headers: { 'Content-Length': '2048' }, body: 'x'.repeat(2048) })
    const expectation = await request(svr.port, '/', { headers: { Expect: 'something-else' } })
    for (const [res, status, path] of [[tooLarge, 413, '/upload'], [expectation, 417, '/']]) {
      assert.equal(res.status, status)
      assert.equal(res.headers.server, 'svr')
      assert.equal(res.headers['strict-transport-security'], 'max-age=63072000')
      assert.equal(res.headers['x-path'], 'at ' + path)
    }
    const malformed = await rawRequest(svr.port, 'GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n')
    const tooBig = await rawRequest(svr.port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Big: ' + 'y'.repeat(20000) + '\r\n\r\n')
    for (const [res, status] of [[malformed, 400], [tooBig, 431]]) {
      assert.equal(res.status, status)
      assert.equal(res.headers.server, 'svr')
      assert.equal(res.headers['strict-transport-security'], 'max-age=63072000')
      assert.equal(res.headers['x-path'], undefined, 'the path is unknown on a raw answer')
    }
  })

  it('logs a response cut short after its headers with the status sent, marked aborted, and the error', async (t) => {
    const site = await makeSite(t, { workers: 1, logDirectory: 'log' })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), API_SCRIPT)
    const svr = await startSvr(t, site.configFile)
    const cut = await truncatedRequest(svr.port, '/cut')
    assert.equal(cut.status, 200)
    assert.equal(cut.body, 'partial')
    assert.equal(cut.complete, false)
    const lateCut = await truncatedRequest(svr.port, '/late-error')
    assert.equal(lateCut.status, 200)
    assert.equal(lateCut.body, 'partial')
    assert.equal(lateCut.complete, false)
    const lines = await waitForLines(path.join(site.dir, 'log', 'access.log'), 2)
    const entries = lines.map(parseCombined)
    // Chunked, and counted with its framing as nginx counts it: "7\r\npartial\r\n".
    assert.deepEqual(entries.map((e) => [e.request, e.status, e.bytes, e.aborted]), [
      ['GET /cut HTTP/1.1', 200, 12, true],
      ['GET /late-error HTTP/1.1', 200, 12, true]
    ])
    const late = new RegExp('request ' + entries[1].requestId +
      ': 500 \\(Error: too late for a page\\) after the headers of a 200 response were sent; the response is cut short')
    const errors = await waitUntil(async () => {
      const text = await fs.readFile(path.join(site.dir, 'log', 'error.log'), 'utf8')
      return late.test(text) ? text : null
    }, 'no error line for the late callServerError')
    assert.match(errors, new RegExp('request ' + entries[0].requestId + ': uncaught error in application code on GET /cut: ' +
      'Error: failure after the headers'))
  })
})

describe('config values SVR.JS tolerated', () => {
  it('serves them as SVR.JS did: a number header value, a string scode, an scode without a page', async (t) => {
    const site = await makeSite(t, {
      workers: 1,
      customHeaders: { 'X-Max-Age': 60 },
      nonStandardCodes: [{ url: '/gone', scode: '410' }, { url: '/odd', scode: 499 }]
    })
    const svr = await startSvr(t, site.configFile)
    assert.match(svr.output, /warn \[primary\] \S+config\.json: \/customHeaders\/X-Max-Age: the number 60 is sent as the header value "60"/)
    const page = await request(svr.port, '/')
    assert.equal(page.headers['x-max-age'], '60')
    assert.equal((await request(svr.port, '/gone')).status, 410)
    assert.equal((await request(svr.port, '/odd')).status, 501)
  })
})

describe('the server root\'s temp/ and the webroot', () => {
  it('never serves temp/ when the webroot holds the server root', async (t) => {
    const site = await makeSite(t, { workers: 1, wwwroot: '.' })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), EXAMPLE_SCRIPT)
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/hello.svr')).body, 'Hello World! This page was visited 0 times.')
    const temp = await request(svr.port, '/temp/requestCounter')
    assert.equal(temp.status, 403)
    assert.equal((await request(svr.port, '/TEMP/requestCounter')).status, 403)
  })

  it('refuses to unpack 3.x mods into a temp/ inside the webroot', async (t) => {
    const site = await makeSite(t, { workers: 1, wwwroot: '.' })
    const mods = path.join(site.dir, 'mods')
    await fs.mkdir(mods)
    await packLegacyMod(mods, '00-x.tar.gz', CONFIG_MOD, { name: 'X', version: '1.0.0' })
    const result = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(result.code, 1)
    const temp = path.join(site.dir, 'temp')
    assert.equal(result.stderr, 'mod ' + path.join(mods, '00-x.tar.gz') + ' failed to load: ' + temp +
      ', where 3.x mods are unpacked, lies inside the webroot ' + site.dir +
      '; keep the webroot outside the directory of the configuration file\n')
    assert.deepEqual(await fs.readdir(temp), [], 'nothing unpacked')
  })
})
