'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { packLegacyMod } = require('../helpers/mods')
const { makeCertificate, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')

// Mods that wrap the response, as caching, compression and header mods do:
// each replaces writeHead, write and end with a function that marks what
// passes through it and then calls the function it replaced. A wrapper's
// mark says it ran, and the number of marks that it ran once per response.
// writeHead touches the headers only while they are still to be sent, as
// a careful mod does, so that a second writeHead reaches svr; and, as a
// mod that changes the body's length must, it drops Content-Length, set
// or given to writeHead.
const DROP_LENGTH = `
function dropLength (res, fields) {
  res.removeHeader('Content-Length')
  for (const name of Object.keys(fields || {})) if (name.toLowerCase() === 'content-length') delete fields[name]
}
`

function wrappingCode (mark) {
  return `
  const writeHead = res.writeHead
  const write = res.write
  const end = res.end
  res.writeHead = function (status, reason, headers) {
    if (!res.headersSent) {
      dropLength(res, typeof reason === 'object' ? reason : headers)
      res.setHeader('X-Wrapped', (res.getHeader('X-Wrapped') || '') + '${mark}')
    }
    return writeHead.apply(this, arguments)
  }
  res.write = function (chunk, encoding, callback) {
    return write.call(this, chunk === undefined ? chunk : chunk + '{${mark}}', encoding, callback)
  }
  res.end = function (chunk, encoding, callback) {
    if (typeof chunk === 'function') return end.call(this, '[${mark}]', chunk)
    return end.call(this, (chunk === undefined || chunk === null ? '' : chunk) + '[${mark}]', encoding, callback)
  }
`
}

// A 4.x caching mod: answers a URL from memory while the answer's
// Cache-Control max-age lasts, and otherwise records the answer through its
// wrappers (so it also wraps, like svrjs-cache-mod).
const CACHING_MOD = DROP_LENGTH + `
const cache = new Map()
module.exports = function (req, res, logFacilities, config, next) {
  const key = req.url
  const hit = cache.get(key)
  if (hit !== undefined && hit.expires > Date.now()) {
    res.writeHead(hit.status, { ...hit.headers, 'x-cache': 'HIT' })
    res.end(hit.body)
    return
  }
  const entry = { status: 200, headers: {}, body: '', expires: 0 }
  const writeHead = res.writeHead
  const write = res.write
  const end = res.end
  res.writeHead = function (status, reason, headers) {
    if (!res.headersSent) {
      dropLength(res, typeof reason === 'object' ? reason : headers)
      res.setHeader('X-Wrapped', (res.getHeader('X-Wrapped') || '') + 'C')
      entry.status = status
      // As svrjs-cache-mod, it expects the fields as an argument (SVR.JS
      // always gave them) and keeps them with the body.
      const given = typeof reason === 'object' ? reason : headers
      for (const name of Object.keys(given)) entry.headers[name.toLowerCase()] = given[name]
    }
    return writeHead.apply(this, arguments)
  }
  res.write = function (chunk, encoding, callback) {
    entry.body += chunk + '{C}'
    return write.call(this, chunk + '{C}', encoding, callback)
  }
  res.end = function (chunk, encoding, callback) {
    entry.body += (chunk === undefined || chunk === null ? '' : chunk) + '[C]'
    const maxAge = /max-age=(\\d+)/.exec(String(entry.headers['cache-control'] || ''))
    if (maxAge !== null) {
      entry.expires = Date.now() + Number(maxAge[1]) * 1000
      cache.set(key, entry)
    }
    return end.call(this, (chunk === undefined || chunk === null ? '' : chunk) + '[C]', encoding, callback)
  }
  next()
}
module.exports.modInfo = { name: 'caching-mod', version: '1.0' }
`

const SECOND_MOD = DROP_LENGTH + `
module.exports = function (req, res, logFacilities, config, next) {
${wrappingCode('B')}
  next()
}
module.exports.modInfo = { name: 'second-wrapper', version: '1.0' }
`

const LEGACY_MOD = DROP_LENGTH + `
function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback) {
  return function () {
${wrappingCode('L')}
    elseCallback()
  }
}
module.exports = Mod
`

// The script answers twice on /twice: SVR.JS let a second writeHead pass
// with a warning, and so must svr behind any number of wrappers.
const SCRIPT = `
if (href === '/fresh' || href === '/twice' || href === '/cached') {
  globalThis.scriptRuns = (globalThis.scriptRuns || 0) + 1
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': href === '/cached' ? 'max-age=60' : 'no-store',
    'X-Script-Runs': String(globalThis.scriptRuns) })
  if (href === '/twice') res.writeHead(500)
  res.write('hello')
  res.end('!')
  return
}
// Node writes this status line itself: the wrappers still get the fields.
if (href === '/implicit') {
  res.setHeader('Content-Type', 'text/plain')
  res.end('implicit')
  return
}
`

const MODS = {
  C: { file: 'caching.js', source: CACHING_MOD },
  B: { file: 'second.js', source: SECOND_MOD },
  L: { file: 'legacy.tar.gz', legacy: LEGACY_MOD }
}

function permutations (items) {
  if (items.length <= 1) return [items]
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]))
}

// svr's own Cache-Control for one static file, which the caching mod then keeps.
const CACHE_INDEX = { cacheControl: [{ regex: '/^\\/index\\.html$/', value: 'max-age=60' }] }

// Mods in `order`, by the names' alphabetical order as svr loads them.
async function siteWithMods (t, order, config = {}) {
  const site = await makeSite(t, { workers: 1, ...CACHE_INDEX, ...config },
    { 'index.html': 'static index\n', 'other.html': 'other file\n' })
  const dir = path.join(site.dir, 'mods')
  await fs.mkdir(dir)
  for (const [i, mark] of order.entries()) {
    const mod = MODS[mark]
    const name = String(i).padStart(2, '0') + '-' + mod.file
    if (mod.legacy !== undefined) await packLegacyMod(dir, name, mod.legacy, { name: 'legacy-wrapper', version: '1.0' })
    else await fs.writeFile(path.join(dir, name), mod.source)
  }
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
  return site
}

// The last mod in the chain wrapped last, so its wrappers run first: the
// marks of one call read from the last mod to the first. Node's HTTP/2
// response writes the chunk given to end() through this.write(), so there
// the write wrappers mark the end's chunk as well.
function expectedBody (order, http2 = false) {
  const writes = [...order].reverse().map((m) => '{' + m + '}').join('')
  const ends = [...order].reverse().map((m) => '[' + m + ']').join('')
  return 'hello' + writes + '!' + ends + (http2 ? writes : '')
}

describe('mods that wrap the response', () => {
  for (const order of permutations(['C', 'B', 'L'])) {
    it('should run every wrapper once per response, mods in the order ' + order.join(', ') + ', then the script', async (t) => {
      const site = await siteWithMods(t, order)
      const svr = await startSvr(t, site.configFile)
      const wrapped = [...order].reverse().join('')
      const results = []
      for (let i = 0; i < 120; i++) {
        const target = ['/fresh', '/twice', '/cached', '/index.html', '/other.html', '/implicit'][i % 6]
        results.push([target, await request(svr.port, target)])
      }
      const errors = results.filter(([, res]) => res.status !== 200)
      assert.deepEqual(errors.map(([target, res]) => target + ' ' + res.status), [])
      for (const [target, res] of results) {
        if (target === '/implicit') {
          assert.equal(res.body, 'implicit' + [...order].reverse().map((m) => '[' + m + ']').join(''))
          assert.equal(res.headers['x-wrapped'], wrapped)
        } else if (target === '/other.html' || (target === '/index.html' && res.headers['x-cache'] === undefined)) {
          assert.equal(res.body, target.slice(1, -5).replace('index', 'static index').replace('other', 'other file') + '\n' + [...order].reverse().map((m) => '[' + m + ']').join(''))
          assert.equal(res.headers['x-wrapped'], wrapped)
          assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
        } else if (target === '/index.html') {
          assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', 'the fields svr set one by one were cached too')
          assert.equal(res.headers['cache-control'], 'max-age=60')
        } else if (target === '/cached' && res.headers['x-cache'] === 'HIT') {
          assert.equal(res.headers['x-script-runs'], results.find(([name]) => name === '/cached')[1].headers['x-script-runs'])
        } else {
          assert.equal(res.body, expectedBody(order), target)
          assert.equal(res.headers['x-wrapped'], wrapped, target)
        }
      }
      for (const cachedTarget of ['/cached', '/index.html']) {
        const cached = results.filter(([target]) => target === cachedTarget).map(([, res]) => res.headers['x-cache'] || 'MISS')
        assert.deepEqual(cached, ['MISS', ...new Array(19).fill('HIT')], 'the caching mod answers every later ' + cachedTarget + ' itself')
      }
      const warnings = svr.output.match(/writeHead\(500\) after the headers were sent is ignored/g) || []
      assert.equal(warnings.length, 20, 'each second writeHead is a warning')
      assert.doesNotMatch(svr.output, /Maximum call stack|uncaught|worker 1 exited/)
    })
  }

  it('should run the wrappers once per response over HTTP/2 too', async (t) => {
    const site = await siteWithMods(t, ['C', 'L', 'B'])
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig(http2SiteConfig(cert, CACHE_INDEX))
    const svr = await startSvr(t, site.configFile)
    const client = await connectH2(svr.port)
    t.after(() => client.close())
    for (const target of ['/fresh', '/twice', '/other.html']) {
      const res = await h2Request(client, { ':path': target })
      assert.equal(res.status, 200, target)
      assert.equal(res.headers['x-wrapped'], 'BLC', target)
      assert.equal(res.body.toString(), target === '/other.html' ? 'other file\n[B][L][C]{B}{L}{C}' : expectedBody(['C', 'L', 'B'], true), target)
    }
    const miss = await h2Request(client, { ':path': '/index.html' })
    const hit = await h2Request(client, { ':path': '/index.html' })
    assert.deepEqual([miss.headers['x-cache'], hit.headers['x-cache']], [undefined, 'HIT'])
    assert.equal(hit.headers['content-type'], 'text/html; charset=utf-8', 'the fields svr set one by one were cached too')
    await svr.waitFor(/writeHead\(500\) after the headers were sent is ignored/)
  })
})

// A mod whose wrapper fails: it recurses forever (it calls res.writeHead,
// which is itself), or throws, on the paths named in the request.
const FAILING_MOD = `
module.exports = function (req, res, logFacilities, config, next) {
  const mode = req.headers['x-fail']
  if (mode === 'recurse') res.writeHead = function () { return res.writeHead.apply(res, arguments) }
  if (mode === 'throw-end') res.end = function () { throw new Error('the wrapper of end failed') }
  if (mode === 'throw-write') {
    const write = res.write
    let chunks = 0
    res.write = function () {
      if (++chunks > 2) throw new Error('the wrapper of write failed')
      return write.apply(this, arguments)
    }
  }
  next()
}
module.exports.modInfo = { name: 'failing-wrapper', version: '1.0' }
`

describe('a mod whose wrapper fails', () => {
  async function start (t) {
    // 3 MiB, over fileCacheMaxFileSize: streamed from the file in callbacks.
    const large = Buffer.alloc(3 * 1024 * 1024, 'large\n')
    const site = await makeSite(t, { workers: 1 }, { 'index.html': 'static index\n', 'large.txt': large })
    await fs.mkdir(path.join(site.dir, 'mods'))
    await fs.writeFile(path.join(site.dir, 'mods', '00-failing.js'), FAILING_MOD)
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    const svr = await startSvr(t, site.configFile)
    return { svr, large }
  }

  it('should answer that request with a 500 and keep the worker serving', async (t) => {
    const { svr } = await start(t)
    const pid = svr.workerPids().get(1)
    for (const [target, mode] of [['/fresh', 'recurse'], ['/index.html', 'recurse'], ['/large.txt', 'recurse'],
      ['/index.html', 'throw-end'], ['/nothing-here', 'recurse']]) {
      const res = await request(svr.port, target, { headers: { 'x-fail': mode } })
      assert.equal(res.status, 500, target + ' ' + mode)
      assert.match(res.body, /500 Internal Server Error/)
      assert.equal((await request(svr.port, '/fresh')).body, 'hello!', 'the next request is served')
    }
    await svr.waitFor(/application code that wrapped the response \(writeHead\) failed while svr answered through it: RangeError: Maximum call stack size exceeded/)
    await svr.waitFor(/application code that wrapped the response \(end\) failed while svr answered through it: Error: the wrapper of end failed/)
    assert.deepEqual([...svr.workerPids().values()], [pid], 'the worker was never replaced')
    assert.doesNotMatch(svr.output, /worker exits|exited/)
  })

  it('should cut a response whose wrapper fails after the headers went out, and keep serving', async (t) => {
    const { svr, large } = await start(t)
    // The script sends its headers by writeHead before end(); svr's stream
    // of a large file sends them before its third chunk.
    for (const [target, mode] of [['/fresh', 'throw-end'], ['/large.txt', 'throw-write']]) {
      const cut = await request(svr.port, target, { headers: { 'x-fail': mode } }).catch((err) => err)
      assert.equal(cut instanceof Error ? cut.code : 'complete', 'ECONNRESET', target)
    }
    await svr.waitFor(/serverSideScript\.js failed on GET \/fresh: Error: the wrapper of end failed/)
    // Node 20 and 22 throw the wrapper's error out of the file stream's pipe
    // (svr contains it as the request's, and logs it); Node 24's pipe
    // destroys the response with it. Either way the client sees the cut.
    await svr.waitFor(/"GET \/large\.txt HTTP\/1\.1" 200 \d+ "-" "-" "[^"]+" aborted/)
    const whole = await request(svr.port, '/large.txt')
    assert.equal(whole.status, 200)
    assert.equal(whole.body.length, large.length)
    assert.equal(svr.workerPids().size, 1)
    assert.doesNotMatch(svr.output, /worker exits|exited/)
  })
})

// A mod that rewrites HTML answers in its end wrapper, as mods that inject
// a banner or an analytics tag do, and takes the body for a string.
const INJECTING_MOD = `
module.exports = function (req, res, logFacilities, config, next) {
  const end = res.end
  res.end = function (chunk, encoding, callback) {
    if (chunk === undefined) return end.call(this, chunk, encoding, callback)
    res.removeHeader('Content-Length')
    return end.call(this, chunk.replace('</footer>', ' + injected \u2615 caf\u00e9</footer>'), encoding, callback)
  }
  next()
}
module.exports.modInfo = { name: 'injecting-mod', version: '1.0' }
`

describe('a mod that rewrites the body of a built-in error page', () => {
  // The page svr keeps is ASCII, which it hands to Node as latin1 when
  // nothing wraps end; a wrapper that adds other characters and passes on
  // the encoding it was given must get none.
  it('should be handed the page as text, the first time and once the page is kept', async (t) => {
    const site = await makeSite(t, { workers: 1 }, { 'index.html': 'static index\n' })
    await fs.mkdir(path.join(site.dir, 'mods'))
    await fs.writeFile(path.join(site.dir, 'mods', '00-injecting.js'), INJECTING_MOD)
    const svr = await startSvr(t, site.configFile)
    for (const target of ['/missing', '/missing', '/other-missing']) {
      const res = await request(svr.port, target, { headers: { host: 'inject.test' } })
      assert.equal(res.status, 404, target)
      assert.match(res.body, /<footer><em>[^<]* on inject\.test<\/em> \+ injected \u2615 caf\u00e9<\/footer>/, target)
    }
    assert.doesNotMatch(svr.output, /TypeError/)
  })
})
