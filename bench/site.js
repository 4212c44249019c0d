'use strict'

// The files every target serves, made fresh in a temp directory per run.

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { packLegacyMod } = require('../test/helpers/mods')

const LISTING_ENTRIES = 200

// The same application code as bench/bare-cluster.js, in the SVR.JS form.
const SCRIPT = `if (href === '/hello') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end('Hello World')
  return
}
if (href === '/fibonacci') {
  var n = Number(uobject.query.n)
  if (!Number.isInteger(n) || n < 0) {
    res.writeHead(400, { 'Content-Type': 'text/plain' })
    res.end('n must be a non-negative integer')
    return
  }
  var a = 0n
  var b = 1n
  for (var i = 0; i < Math.min(n, 100000); i++) {
    var next = a + b
    a = b
    b = next
  }
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(a.toString())
  return
}
`

// The slowest acceptable way a user proxies today: a 3.x mod in the style
// of the reverse-proxy mods, one http.request per request (Node's global
// agent, which keeps connections alive on Node >= 19) piped both ways.
const PROXY_MOD = `var http = require('http')
function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback, configJSON, callServerError) {
  return function () {
    if (href.indexOf('/proxy/') !== 0) return elseCallback()
    var headers = Object.assign({}, req.headers)
    headers.host = '127.0.0.1:' + PORT
    var upstream = http.request({ hostname: '127.0.0.1', port: PORT, path: req.url.slice(6), method: req.method, headers: headers },
      function (answer) {
        res.writeHead(answer.statusCode, answer.headers)
        answer.pipe(res)
      })
    upstream.on('error', function (err) { callServerError(502, 'bench-proxy-mod', err) })
    req.pipe(upstream)
  }
}
module.exports = Mod
`

/**
 * @param {string} dir an empty directory
 * @param {number} [upstreamPort] the port of bench/proxy-upstream.js, for the routes /proxy/ and /cached/ (none without)
 * @returns {Promise<{webroot: string, configFile: string, scriptFile: string, upstreamPort: number}>}
 */
async function createSite (dir, upstreamPort) {
  const webroot = path.join(dir, 'webroot')
  const list = path.join(webroot, 'list')
  await fs.mkdir(list, { recursive: true })
  await fs.writeFile(path.join(webroot, 'index.html'), '<!doctype html><title>bench</title><h1>bench</h1>\n')
  await fs.writeFile(path.join(webroot, '1k.html'), htmlOfSize(1024))
  await fs.writeFile(path.join(webroot, '1m.bin'), crypto.randomBytes(1024 * 1024))
  await fs.writeFile(path.join(webroot, '100k.txt'), textOfSize(100 * 1024))
  for (let i = 0; i < LISTING_ENTRIES; i++) {
    await fs.writeFile(path.join(list, `file-${String(i).padStart(3, '0')}.txt`), `entry ${i}\n`)
  }
  const scriptFile = path.join(dir, 'serverSideScript.js')
  await fs.writeFile(scriptFile, SCRIPT)
  const configFile = path.join(dir, 'config.json')
  await fs.writeFile(configFile, JSON.stringify({
    port: '127.0.0.1:0',
    wwwroot: webroot,
    workers: 2,
    enableDirectoryListing: true,
    ...(upstreamPort === undefined ? {} : proxyRoutes(dir, upstreamPort)),
    // For experiments: BENCH_SVR_CONFIG='{"enableLogging":false}' npm run bench
    ...JSON.parse(process.env.BENCH_SVR_CONFIG || '{}')
  }, null, 2))
  return { webroot, configFile, scriptFile, upstreamPort }
}

/**
 * The proxy rows' routes: /proxy/… to the upstream, the prefix stripped,
 * and /cached/… to the same upstream through the response cache (the
 * cache-hit row). The upstream, left as the other proxy rows know it, says
 * nothing of freshness: the route's `validity` keeps its 200s for an hour,
 * longer than any run.
 * @param {string} dir
 * @param {number} upstreamPort
 * @returns {{proxy: object[], responseCache: {directory: string}}}
 */
function proxyRoutes (dir, upstreamPort) {
  const upstreams = ['http://127.0.0.1:' + upstreamPort]
  return {
    proxy: [
      { path: '/proxy', stripPrefix: true, upstreams },
      { path: '/cached', stripPrefix: true, upstreams, cache: { validity: { 200: 3600 } } }
    ],
    responseCache: { directory: path.join(dir, 'response-cache') }
  }
}

/**
 * The site's config without the `proxy` routes and with the 3.x proxy mod
 * instead, in a directory of its own (mods are found beside the config),
 * with the script beside it too.
 * @param {{configFile: string, scriptFile: string, upstreamPort: number}} site
 * @param {string} dir where the site lives
 * @param {object} overrides more config values
 * @returns {Promise<string>} the config file
 */
async function createModProxySite (site, dir, overrides) {
  const root = path.join(dir, 'mod-proxy')
  await fs.mkdir(path.join(root, 'mods'), { recursive: true })
  await fs.copyFile(site.scriptFile, path.join(root, 'serverSideScript.js'))
  await packLegacyMod(path.join(root, 'mods'), 'proxy.tar.gz', PROXY_MOD.replace(/PORT/g, String(site.upstreamPort)),
    { name: 'bench proxy mod', version: '1.0.0' })
  const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  const configFile = path.join(root, 'config.json')
  await fs.writeFile(configFile, JSON.stringify({ ...config, ...overrides, proxy: [] }, null, 2))
  return configFile
}

function htmlOfSize (size) {
  const head = '<!doctype html><title>1 KiB</title><p>'
  const tail = '</p>\n'
  return head + 'x'.repeat(size - head.length - tail.length) + tail
}

// Compressible but not trivially so: words in a pseudo-random order.
function textOfSize (size) {
  const words = ['server', 'request', 'response', 'header', 'worker', 'cluster', 'static', 'file', 'listing', 'cache']
  let seed = 1
  let text = ''
  while (text.length < size) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    text += words[seed % words.length] + (seed % 13 === 0 ? '\n' : ' ')
  }
  return text.slice(0, size)
}

module.exports = { createSite, createModProxySite, LISTING_ENTRIES }
