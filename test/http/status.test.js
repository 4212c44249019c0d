'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request, requestPastStopped } = require('../helpers/http')
const { createScope } = require('../helpers/scope')
const { waitUntil } = require('../helpers/wait')
const { fullServerString } = require('../../lib/version')

const STATUS = '/svrjsstatus.svr'

/** The value of `<dd id="name">` on the status page. */
function field (body, name) {
  const match = new RegExp('<dd id="' + name + '">([^<]*)</dd>').exec(body)
  assert.notEqual(match, null, 'status page lacks ' + name)
  return match[1]
}

function workerRows (body) {
  return body.match(/<tr class="worker[^"]*">.*?<\/tr>/g) || []
}

async function sendRequests (port, count) {
  for (let i = 0; i < count; i++) {
    // agent:false: a new connection each time, so the kernel spreads them over the workers.
    const res = await request(port, '/index.html', { agent: false })
    assert.equal(res.status, 200)
  }
}

describe('status page with two workers', () => {
  const scope = createScope()
  let svr

  before(async () => {
    const site = await makeSite(scope, { workers: 2 })
    svr = await startSvr(scope, site.configFile)
  })
  after(() => scope.cleanup())

  it('should add up the counters of every worker', async () => {
    const N = 30
    await sendRequests(svr.port, N)
    await request(svr.port, '/missing')
    const res = await request(svr.port, STATUS)
    assert.equal(res.status, 200)
    assert.ok(Number(field(res.body, 'requests')) >= N + 1, 'total requests ' + field(res.body, 'requests'))
    assert.ok(Number(field(res.body, 'status-4xx')) >= 1)
    assert.equal(field(res.body, 'workers'), '2 of 2')
    const rows = workerRows(res.body)
    assert.equal(rows.length, 2)
    const pids = [...svr.workerPids().values()].sort()
    const shown = rows.map((row) => Number(/<td>\d+<\/td><td>(\d+)<\/td>/.exec(row)[1])).sort()
    assert.deepEqual(shown, pids)
    // The total is the sum of the rows, not one worker's own count.
    const perWorker = rows.map((row) => Number(/<td>\d+<\/td><td>\d+<\/td><td>(\d+)<\/td>/.exec(row)[1]))
    assert.equal(perWorker.reduce((a, b) => a + b), Number(field(res.body, 'requests')))
  })

  it('should send a locked-down HTML page without version details', async () => {
    const res = await request(svr.port, STATUS)
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.match(res.headers['content-security-policy'], /default-src 'none'/)
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.equal(field(res.body, 'server'), 'svr')
    assert.doesNotMatch(res.body, /Node\.js\//)
  })

  it('should escape the Host header', async () => {
    const res = await request(svr.port, STATUS, { headers: { host: 'x"><script>a</script>' } })
    assert.equal(res.status, 200)
    assert.doesNotMatch(res.body, /<script>/)
    assert.match(res.body, /&lt;script&gt;/)
  })

  it('should answer HEAD without a body and refuse other methods with 405', async () => {
    const head = await request(svr.port, STATUS, { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    assert.ok(Number(head.headers['content-length']) > 0)
    const post = await request(svr.port, STATUS, { method: 'POST', body: 'x' })
    assert.equal(post.status, 405)
  })

  it('should list a worker that does not answer in time', async () => {
    const [first, second] = [...svr.workerPids().values()]
    process.kill(first, 'SIGSTOP')
    try {
      // The stopped worker takes no more connections once one waits on it;
      // the other one serves the page.
      const res = await requestPastStopped(svr.port, STATUS)
      assert.equal(res.status, 200)
      assert.equal(field(res.body, 'workers'), '1 of 2')
      const missing = workerRows(res.body).filter((row) => row.includes('did not answer'))
      assert.equal(missing.length, 1)
      assert.match(missing[0], new RegExp('<td>' + first + '</td>'))
      assert.doesNotMatch(missing[0], new RegExp('<td>' + second + '</td>'))
    } finally {
      process.kill(first, 'SIGCONT')
    }
  })
})

describe('status page in single-threaded mode', () => {
  it('should show its own counters and, with exposeServerVersion, the version', async (t) => {
    const site = await makeSite(t, { exposeServerVersion: true })
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    await sendRequests(svr.port, 5)
    const res = await request(svr.port, STATUS)
    assert.equal(res.status, 200)
    assert.ok(Number(field(res.body, 'requests')) >= 5)
    assert.equal(workerRows(res.body).length, 1)
    assert.equal(field(res.body, 'server'), fullServerString())
  })
})

// A response's status is counted once it finishes: by the access log's
// report when it has one, by a 'finish' listener of the counters when not.
describe('status page counts of 4xx and 5xx answers', () => {
  for (const [name, config] of [['with the access log', {}], ['without it', { enableLogging: false }]]) {
    it('should count each finished answer once, ' + name, async (t) => {
      const site = await makeSite(t, { workers: 1, ...config })
      await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), "if (href === '/boom') throw new Error('boom')\n")
      const svr = await startSvr(t, site.configFile)
      for (const [target, status] of [['/missing', 404], ['/index.html', 200], ['/other', 404], ['/boom', 500], ['/.hidden', 403]]) {
        assert.equal((await request(svr.port, target)).status, status)
      }
      // The last answer is counted as its response closes, a moment after the client has it.
      let body = ''
      await waitUntil(async () => {
        body = (await request(svr.port, STATUS)).body
        return field(body, 'status-5xx') === '1' && field(body, 'status-4xx') === '3'
      }, 'the counters of five answers', 5000).catch(() => {})
      assert.deepEqual([field(body, 'status-4xx'), field(body, 'status-5xx')], ['3', '1'])
    })
  }
})

describe('status page access', () => {
  it('should not exist when allowStatus is off', async (t) => {
    const site = await makeSite(t, { workers: 1, allowStatus: false })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, STATUS)
    assert.equal(res.status, 404)
    assert.doesNotMatch(res.body, /id="requests"/)
  })
})
