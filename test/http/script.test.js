'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')

/**
 * A site whose serverSideScript.js (beside config.json) has the given text.
 * @returns {Promise<{site: object, svr: object}>}
 */
async function siteWithScript (t, script, config = {}, files) {
  const site = await makeSite(t, { workers: 1, ...config }, files)
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script)
  return { site, svr: await startSvr(t, site.configFile) }
}

function fibonacci (n) {
  let a = 0n
  let b = 1n
  for (let i = 0; i < n; i++) [a, b] = [b, a + b]
  return a
}

// Written the way SVR.JS 3.x users write their scripts: no `var` on the
// flag, answers 404 itself for every other path.
const FIBONACCI_SCRIPT = `
disableEndElseCallbackExecute = true
if (href === '/fibonacci') {
  var n = Number(uobject.query.n)
  if (!/^\\d+$/.test(uobject.query.n || '') || n > 100000) {
    callServerError(400)
  } else {
    var a = 0n
    var b = 1n
    for (var i = 0; i < n; i++) {
      var t = a + b
      a = b
      b = t
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end(a.toString())
  }
} else {
  callServerError(404)
}
`

describe('serverSideScript.js (SVR.JS form)', () => {
  it('should run the Fibonacci script unchanged', async (t) => {
    const { svr } = await siteWithScript(t, FIBONACCI_SCRIPT)
    const res = await request(svr.port, '/fibonacci?n=20000')
    assert.equal(res.status, 200)
    assert.equal(res.body.length, 4180)
    assert.equal(res.body, fibonacci(20000).toString())
    assert.equal((await request(svr.port, '/fibonacci?n=10')).body, '55')
    assert.equal((await request(svr.port, '/fibonacci?n=abc')).status, 400)
    assert.equal((await request(svr.port, '/fibonacci?n=100001')).status, 400)
    // The script answers 404 itself even where a static file exists.
    const other = await request(svr.port, '/index.html')
    assert.equal(other.status, 404)
  })

  it('should fall through to static files when the script does not return', async (t) => {
    const script = "if (href === '/hello') {\n  res.writeHead(200, { 'Content-Type': 'text/plain' })\n  res.end('Hello World')\n  return\n}\n"
    const { svr } = await siteWithScript(t, script)
    const hello = await request(svr.port, '/hello')
    assert.equal(hello.status, 200)
    assert.equal(hello.body, 'Hello World')
    const file = await request(svr.port, '/')
    assert.equal(file.status, 200)
    assert.equal(file.body, '<h1>test index</h1>\n')
    assert.equal((await request(svr.port, '/missing.txt')).status, 404)
  })

  it('should let an asynchronous script answer later or call elseCallback itself', async (t) => {
    const script = [
      'disableEndElseCallbackExecute = true',
      "if (href === '/later') {",
      "  setTimeout(() => { res.writeHead(200); res.end('late answer') }, 30)",
      "} else if (href === '/read') {",
      "  fs.readFile(__dirname + '/../serverSideScript.js', 'utf8', (err, text) => {",
      "    if (err) return callServerError(500, err)",
      "    res.end(String(text.length))",
      '  })',
      '} else {',
      '  setTimeout(elseCallback, 10)',
      '}'
    ].join('\n')
    const { site, svr } = await siteWithScript(t, script)
    assert.equal((await request(svr.port, '/later')).body, 'late answer')
    const length = (await fs.readFile(path.join(site.dir, 'serverSideScript.js'), 'utf8')).length
    assert.equal((await request(svr.port, '/read')).body, String(length))
    const fallback = await request(svr.port, '/')
    assert.equal(fallback.status, 200)
    assert.equal(fallback.body, '<h1>test index</h1>\n')
  })


  it('should let a script finish its callback after a late elseCallback before the server answers', async (t) => {
    // As with SVR.JS, and as before the chain's thenable: the rest of the
    // pipeline goes on once the script's callback has returned, so a header
    // set just after elseCallback still goes out, even for a file answered
    // from memory.
    const script = [
      'disableEndElseCallbackExecute = true',
      "setTimeout(() => { elseCallback(); res.setHeader('X-After', 'yes') }, 5)"
    ].join('\n')
    const { svr } = await siteWithScript(t, script)
    for (let i = 0; i < 3; i++) {
      const res = await request(svr.port, '/index.html')
      assert.equal(res.status, 200)
      assert.equal(res.headers['x-after'], 'yes')
    }
    assert.doesNotMatch(svr.output, /ERR_HTTP_HEADERS_SENT/)
  })
  it('should stop at a response the script has ended, however it then calls elseCallback', async (t) => {
    // SVR.JS calls elseCallback after a body without `return`, and its
    // static handler then tried to answer a second time.
    const script = [
      "if (href === '/sync') { res.end('sync') }",
      "if (href === '/late') { disableEndElseCallbackExecute = true; setTimeout(() => { res.end('late'); elseCallback() }, 5) }"
    ].join('\n')
    const { svr } = await siteWithScript(t, script, {}, { 'sync': 'static sync', 'late': 'static late' })
    const agent = new http.Agent({ keepAlive: true })
    t.after(() => agent.destroy())
    for (const name of ['sync', 'late']) {
      const res = await request(svr.port, '/' + name, { agent })
      assert.equal(res.status, 200)
      assert.equal(res.body, name)
      assert.notEqual(res.headers.connection, 'close', name + ': the connection is fine for another request')
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.doesNotMatch(svr.output, /ERR_HTTP_HEADERS_SENT|ERR_STREAM_WRITE_AFTER_END|failed/)
  })

  it('should provide callServerError, redirect, responseEnd, the site head and foot, and customvars', async (t) => {
    const script = [
      "if (href === '/fail') { callServerError(500); return }",
      "if (href === '/gone') { callServerError(410, 'my-ext', { 'X-Why': 'gone' }); return }",
      "if (href === '/move') { redirect('/target?x=1', true); return }",
      "if (href === '/page') { res.setHeader('Content-Type', 'text/html'); responseEnd('<p>body</p>'); return }",
      "if (href === '/count') { customvar1 = (customvar1 || 0) + 1; res.end(String(customvar1)); return }",
      "if (href === '/names.JSON') {",
      '  res.end(JSON.stringify({ href, ext, search, origHref, defaultpage, page404, fd, authUser,',
      '    query: uobject.query, types: [typeof serverconsole.errmessage, typeof getCustomHeaders, typeof parsePostData,',
      '      typeof filterHeaders, typeof checkHostname, typeof checkHref, typeof os.cpus, typeof crypto.randomUUID],',
      "    server: getCustomHeaders().Server, hasHashes: JSON.stringify(configJSON).includes('abcdef0123') }))",
      '  return',
      '}'
    ].join('\n')
    const files = { 'index.html': 'index', '.head': '<header>H</header>', '.foot': '<footer>F</footer>' }
    const config = { users: [{ name: 'bob', pass: 'abcdef0123', salt: 'pepper' }] }
    const { svr } = await siteWithScript(t, script, config, files)
    const fail = await request(svr.port, '/fail')
    assert.equal(fail.status, 500)
    assert.match(fail.body, /500 Internal Server Error/)
    const gone = await request(svr.port, '/gone')
    assert.equal(gone.status, 410)
    assert.equal(gone.headers['x-why'], 'gone')
    const move = await request(svr.port, '/move')
    assert.equal(move.status, 302)
    assert.equal(move.headers.location, '/target?x=1')
    const page = await request(svr.port, '/page')
    assert.equal(page.body, '<header>H</header><p>body</p><footer>F</footer>')
    assert.equal((await request(svr.port, '/count')).body, '1')
    assert.equal((await request(svr.port, '/count')).body, '2')
    const namesRes = await request(svr.port, '/names.JSON?a=1&b=%20')
    assert.equal(namesRes.status, 200, namesRes.body + svr.output)
    const names = JSON.parse(namesRes.body)
    assert.deepEqual({ ...names, types: undefined }, {
      href: '/names.JSON',
      ext: 'json',
      search: '?a=1&b=%20',
      origHref: '/names.JSON',
      defaultpage: 'index.html',
      page404: '404.html',
      fd: '',
      authUser: null,
      query: { a: '1', b: '%20' },
      types: undefined,
      server: 'svr',
      hasHashes: false
    })
    assert.deepEqual(names.types, Array(8).fill('function'))
  })

  // svr makes per request only the values a script's text names (an
  // optimisation, lib/application/used-names.js); one that reaches them
  // without naming them must still get all of them.
  it('should hand every value to a script that reaches them through eval, arguments or an escaped name', async (t) => {
    const script = [
      "if (href === '/eval') { eval('redirect')('/target', true); return }",
      // responseEnd is the 4th name, uobject the 7th.
      "if (href === '/arguments') { arguments[3](arguments[6].query.q); return }",
      "if (href === '/escaped.TXT') { res.end(\\u0065xt + ' ' + typeof \\u0063heckHref); return }"
    ].join('\n')
    const files = { '.head': '<h>', '.foot': '</h>' }
    const { svr } = await siteWithScript(t, script, {}, files)
    const moved = await request(svr.port, '/eval')
    assert.equal(moved.status, 302, moved.body + svr.output)
    assert.equal(moved.headers.location, '/target')
    assert.equal((await request(svr.port, '/arguments?q=seen')).body, '<h>seen</h>')
    assert.equal((await request(svr.port, '/escaped.TXT')).body, 'txt function')
  })

  it('should resolve require() beside the script and name it with the right line in stack traces', async (t) => {
    const script = "const helper = require('./lib/helper')\nif (href === '/helper') { res.end(helper()); return }\nif (href === '/throw') {\n  null.boom()\n}\n"
    const site = await makeSite(t, { workers: 1, stackHidden: false })
    await fs.mkdir(path.join(site.dir, 'lib'))
    await fs.writeFile(path.join(site.dir, 'lib', 'helper.js'), "module.exports = () => 'from helper'\n")
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script)
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/helper')).body, 'from helper')
    const mark = svr.output.length
    const res = await request(svr.port, '/throw')
    assert.equal(res.status, 500)
    assert.match(res.body, /serverSideScript\.js:4:/)
    await svr.waitFor(/serverSideScript\.js:4:\d+/, 5000, mark)
  })

  it('should hide the stack of a synchronous throw by default', async (t) => {
    const { svr } = await siteWithScript(t, "throw new Error('kaboom')\n")
    const mark = svr.output.length
    const res = await request(svr.port, '/')
    assert.equal(res.status, 500)
    assert.doesNotMatch(res.body, /kaboom|serverSideScript/)
    assert.match(res.body, /\[error stack hidden\]/)
    const line = await svr.waitFor(/error .*kaboom.*/, 5000, mark)
    assert.match(line[0], /serverSideScript\.js:1/)
  })

  it('should contain an asynchronous throw or rejection to its request and keep the worker', async (t) => {
    const script = [
      'disableEndElseCallbackExecute = true',
      "if (href === '/timer') setTimeout(() => { throw new Error('late throw') }, 5)",
      "else if (href === '/reject') Promise.reject(new Error('late rejection'))",
      "else res.end('pid ' + process.pid)"
    ].join('\n')
    const { svr } = await siteWithScript(t, script)
    const before = (await request(svr.port, '/')).body
    assert.equal((await request(svr.port, '/timer')).status, 500)
    assert.equal((await request(svr.port, '/reject')).status, 500)
    assert.equal((await request(svr.port, '/')).body, before, 'the same worker still serves')
    await svr.waitFor(/late throw/, 5000)
    await svr.waitFor(/late rejection/, 5000)
  })

  it('should refuse to start with a broken script and name file and line', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const script = path.join(site.dir, 'serverSideScript.js')
    await fs.writeFile(script, "res.end('ok')\nif (href === ) {}\nres.end()\n")
    const result = await runSvr(['--config', site.configFile], { timeout: 15000 })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /serverSideScript\.js:2: SyntaxError/)
    // An unfinished block is reported at the file's last line, not past it.
    await fs.writeFile(script, "res.end('ok')\nif (href === '/x') {\n  res.end()\n")
    const unfinished = await runSvr(['--config', site.configFile], { timeout: 15000 })
    assert.equal(unfinished.code, 1)
    assert.match(unfinished.stderr, /serverSideScript\.js:[34]: SyntaxError: Unexpected end of input/)
  })

  it('should not run the script with --disable-mods', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), "res.end('script'); return\n")
    const svr = await startSvr(t, site.configFile, { args: ['--disable-mods'] })
    assert.equal((await request(svr.port, '/')).body, '<h1>test index</h1>\n')
  })

  it('should load the webroot copy with useWebRootServerSideScript', async (t) => {
    const site = await makeSite(t, { workers: 1, useWebRootServerSideScript: true }, {
      'index.html': 'index',
      'serverSideScript.js': "if (href === '/who') { res.end('webroot script'); return }\n"
    })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), "res.end('config dir script'); return\n")
    const svr = await startSvr(t, site.configFile)
    assert.equal((await request(svr.port, '/who')).body, 'webroot script')
    const source = await request(svr.port, '/serverSideScript.js')
    assert.notEqual(source.status, 200)
    assert.doesNotMatch(source.body, /webroot script/)
  })
})

describe('serverSideScript.js (module form)', () => {
  it('should call the exported async handler and fall through on next()', async (t) => {
    const script = [
      "const { setTimeout: sleep } = require('node:timers/promises')",
      'module.exports = async (req, res, next) => {',
      "  if (req.url === '/json') {",
      '    await sleep(5)',
      "    res.setHeader('Content-Type', 'application/json')",
      '    res.end(JSON.stringify({ ok: true }))',
      "  } else if (req.url === '/reject') {",
      "    throw new Error('module rejection')",
      '  } else {',
      '    next()',
      '  }',
      '}'
    ].join('\n')
    const { svr } = await siteWithScript(t, script, { serverSideScriptFormat: 'module' })
    assert.deepEqual(JSON.parse((await request(svr.port, '/json')).body), { ok: true })
    assert.equal((await request(svr.port, '/')).body, '<h1>test index</h1>\n')
    assert.equal((await request(svr.port, '/reject')).status, 500)
    await svr.waitFor(/module rejection/, 5000)
  })
})
