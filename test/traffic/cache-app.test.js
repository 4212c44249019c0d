'use strict'

// `cache` rules: the answers of serverSideScript.js (and of mods, which
// answer through the same response) kept in the response cache.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { fillsOver } = require('../helpers/cache')
const { makeCertificate, connectH2, h2Request, http2SiteConfig } = require('../helpers/tls')

// A 3.x script that notes every run in runs.log, and answers by path.
function script (dir) {
  return `disableEndElseCallbackExecute = true
const fs = require('fs')
const runs = ${JSON.stringify(path.join(dir, 'runs.log'))}
const broken = ${JSON.stringify(path.join(dir, 'broken'))}
if (!href.startsWith('/app/')) {
  elseCallback()
} else {
  fs.appendFileSync(runs, href + '\\n')
  if (href === '/app/slow') {
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'text/x-test', 'X-Made': 'by the script' })
      res.end('slow answer')
    }, 300)
  } else if (href === '/app/chunks') {
    res.setHeader('Content-Type', 'text/plain')
    res.write('first,')
    res.write(Buffer.from('second,'))
    setTimeout(() => res.end('third'), 20)
  } else if (href === '/app/private') {
    res.writeHead(200, { 'Cache-Control': 'private, max-age=60' })
    res.end('mine')
  } else if (href === '/app/cookie') {
    res.writeHead(200, { 'Set-Cookie': 'session=1' })
    res.end('with a cookie')
  } else if (href === '/app/flaky') {
    if (fs.existsSync(broken)) throw new Error('the database is down')
    res.writeHead(200, { 'Cache-Control': 'max-age=1' })
    res.end('good answer')
  } else {
    res.end('answer of ' + href)
  }
}
`
}

async function scriptSite (t, rules, config = {}) {
  const site = await makeSite(t, { workers: 2, stateDirectory: 'state', metricsPath: '/metrics', cache: rules, ...config })
  await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script(site.dir))
  const svr = await startSvr(t, site.configFile)
  const runs = async () => (await fs.readFile(path.join(site.dir, 'runs.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean)
  return { site, svr, runs }
}

describe('response cache of the application\'s answers', () => {
  it('runs the script once for 100 concurrent requests over 2 workers, and answers the rest from the cache', async (t) => {
    const { svr, runs } = await scriptSite(t, [{ path: '/app', validity: { 200: 60 } }])
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 })
    t.after(() => agent.destroy())
    const answers = await Promise.all(Array.from({ length: 100 }, () => request(svr.port, '/app/slow', { agent })))
    assert.deepEqual([...new Set(answers.map((res) => [res.status, res.body, res.headers['content-type'], res.headers['x-made']].join(' ')))],
      ['200 slow answer text/x-test by the script'])
    assert.deepEqual(await runs(), ['/app/slow'])
    assert.deepEqual([...new Set(answers.map((res) => res.headers['cache-status']))].sort(), ['svr; fwd=miss; stored', 'svr; hit'])
    // Each answer has its own request id, never the stored one's.
    assert.equal(new Set(answers.map((res) => res.headers['x-request-id'])).size, 100)
    const later = await request(svr.port, '/app/slow')
    assert.deepEqual([later.body, later.headers['cache-status'], later.headers['x-made']], ['slow answer', 'svr; hit', 'by the script'])
    assert.deepEqual(await runs(), ['/app/slow'])
  })

  it('keeps an answer written in parts whole, and answers ranges and HEAD from it', async (t) => {
    const { svr, runs } = await scriptSite(t, [{ path: '/app/', validity: { 200: 60 } }])
    const first = await request(svr.port, '/app/chunks')
    assert.deepEqual([first.body, first.headers['cache-status']], ['first,second,third', 'svr; fwd=miss; stored'])
    await fillsOver(svr)
    const part = await request(svr.port, '/app/chunks', { headers: { range: 'bytes=6-12' } })
    assert.deepEqual([part.status, part.body, part.headers['content-range']], [206, 'second,', 'bytes 6-12/18'])
    const head = await request(svr.port, '/app/chunks', { method: 'HEAD' })
    assert.deepEqual([head.status, head.body, head.headers['content-length'], head.headers['cache-status']], [200, '', '18', 'svr; hit'])
    assert.deepEqual(await runs(), ['/app/chunks'])
    // A HEAD of what is not stored runs the script, and stores nothing.
    assert.equal((await request(svr.port, '/app/other', { method: 'HEAD' })).headers['cache-status'], 'svr; fwd=request; detail=head')
    assert.equal((await request(svr.port, '/app/other')).headers['cache-status'], 'svr; fwd=miss; stored')
    assert.deepEqual(await runs(), ['/app/chunks', '/app/other', '/app/other'])
  })

  it('caches only under its rules\' paths, and never what is private or sets a cookie', async (t) => {
    const { svr, runs } = await scriptSite(t, [{ path: '/app/cached', validity: { 200: 60 } }, { path: '/app/private', validity: { 200: 60 } }, { path: '/app/cookie', validity: { 200: 60 } }])
    const statuses = []
    for (const target of ['/app/cachedness', '/app/cachedness', '/app/private', '/app/private', '/app/cookie', '/app/cookie']) {
      statuses.push((await request(svr.port, target)).headers['cache-status'])
      await fillsOver(svr)
    }
    // "/app/cached" is a prefix of /app/cachedness only as a string, not by path segments.
    assert.deepEqual(statuses, [undefined, undefined, 'svr; fwd=miss', 'svr; fwd=miss', 'svr; fwd=miss', 'svr; fwd=miss'])
    assert.deepEqual(await runs(), ['/app/cachedness', '/app/cachedness', '/app/private', '/app/private', '/app/cookie', '/app/cookie'])
  })

  it('answers from a stale entry within staleIfError when the script fails, and from the script again after', async (t) => {
    const { site, svr } = await scriptSite(t, [{ path: '/app', staleIfError: 2 }])
    assert.equal((await request(svr.port, '/app/flaky')).body, 'good answer')
    await fs.writeFile(path.join(site.dir, 'broken'), '')
    await sleep(1100)
    const standIn = await request(svr.port, '/app/flaky')
    assert.deepEqual([standIn.status, standIn.body, standIn.headers['cache-status']], [200, 'good answer', 'svr; fwd=stale; fwd-status=500'])
    await sleep(2000)
    assert.equal((await request(svr.port, '/app/flaky')).status, 500)
    await fs.rm(path.join(site.dir, 'broken'))
    const back = await request(svr.port, '/app/flaky')
    assert.deepEqual([back.status, back.body, back.headers['cache-status']], [200, 'good answer', 'svr; fwd=stale; stored'])
  })

  it('keeps an HTTP/2 answer once, whose end() writes through write()', async (t) => {
    const site = await makeSite(t)
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), script(site.dir))
    const cert = await makeCertificate(site.dir, 'main')
    await site.writeConfig(http2SiteConfig(cert, { stateDirectory: 'state', metricsPath: '/metrics', cache: [{ path: '/app', validity: { 200: 60 } }] }))
    const svr = await startSvr(t, site.configFile)
    const client = await connectH2(svr.port)
    t.after(() => client.close())
    const get = async () => {
      const res = await h2Request(client, { ':path': '/app/chunks' })
      return [res.status, res.body.toString(), res.headers['cache-status']]
    }
    assert.deepEqual(await get(), [200, 'first,second,third', 'svr; fwd=miss; stored'])
    await fillsOver(svr, async () => (await h2Request(client, { ':path': '/metrics' })).body.toString())
    assert.deepEqual(await get(), [200, 'first,second,third', 'svr; hit'])
  })
})
