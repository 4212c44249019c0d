'use strict'

// SVR.JS 3.x scripts and mods find the environment they had under SVR.JS:
// the webroot as working directory, `<server root>/temp` as a script's
// __dirname, the server root at a mod's `__dirname + "/../../.."`, and
// svr's own packages through require().

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { packLegacyMod } = require('../helpers/mods')

// Written the way SVR.JS's shipped example script is: a request counter in
// `__dirname + "/../temp/requestCounter"`, created when missing, and a
// small forward proxy at /proxy.svr/this/<path> that fetches <path> from
// this same server with http.request and filterHeaders.
const EXAMPLE_SCRIPT = `
disableEndElseCallbackExecute = true
if (href == '/hello.svr') {
  var counterFile = __dirname + '/../temp/requestCounter'
  var count = 0
  try {
    count = parseInt(fs.readFileSync(counterFile).toString()) + 1
  } catch (err) {
    count = 0
  }
  fs.writeFileSync(counterFile, count.toString())
  res.writeHead(200, 'OK', { 'Content-Type': 'text/plain' })
  res.end('Hello World! This page was visited ' + count + ' times.')
} else if (href.indexOf('/proxy.svr/this/') == 0) {
  var target = href.slice('/proxy.svr/this'.length) + search
  var headers = filterHeaders(req.headers)
  var upstream = http.request({
    host: '127.0.0.1',
    port: req.socket.localPort,
    path: target,
    method: req.method,
    headers: headers
  }, function (answer) {
    res.writeHead(answer.statusCode, filterHeaders(answer.headers))
    answer.pipe(res)
  })
  upstream.on('error', function (err) {
    callServerError(502, 'test-proxy', err)
  })
  req.pipe(upstream)
} else {
  elseCallback()
}
`

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

// A 3.x mod that keeps its settings beside config.json, as the public
// reverse-proxy mod does, writing {} there when the file is missing.
const CONFIG_MOD = `
const fs = require('fs')
const configFile = __dirname + '/../../../x-config.json'
function Mod () {
  if (!fs.existsSync(configFile)) fs.writeFileSync(configFile, '{}')
  this.settings = JSON.parse(fs.readFileSync(configFile, 'utf8'))
}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback) {
  const settings = this.settings
  return function () {
    if (href === '/x-settings') {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ settings: settings, mime: require('mime-types').lookup('a.css') }))
      return
    }
    elseCallback()
  }
}
module.exports = Mod
`

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
