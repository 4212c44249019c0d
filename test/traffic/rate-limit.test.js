'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const fs = require('node:fs/promises')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream, echo } = require('../helpers/upstream')

async function limited (t, rules, config = {}) {
  const site = await makeSite(t, { workers: 2, ...config, rateLimits: rules })
  const svr = await startSvr(t, site.configFile)
  return { svr, site }
}

// `count` requests at once, each on its own connection.
function burst (port, count, target = '/', headers) {
  return Promise.all(Array.from({ length: count }, () => request(port, target, { headers })))
}

// 429, or 'in' for a request the limits let through (whatever the site then answered).
const outcome = (status) => status === 429 ? 429 : 'in'
const statuses = (answers) => answers.map((res) => outcome(res.status)).sort()

describe('rate limits', () => {
  it('admits the configured rate over the whole server, not per worker: 3x the limit over 8 connections, 10 s', async (t) => {
    // A burst, as nginx advises: with none, a request that comes a moment
    // after its slot is refused and the slot is lost (nginx too admits less
    // than the rate then).
    const { svr } = await limited(t, [{ path: '/', rate: 20, burst: 5 }])
    // 8 keep-alive connections land on both workers; together they ask 60 a second.
    const agents = Array.from({ length: 8 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }))
    t.after(() => agents.forEach((agent) => agent.destroy()))
    const seconds = 10
    const end = Date.now() + seconds * 1000
    const refusals = []
    let admitted = 0
    await Promise.all(agents.map(async (agent, i) => {
      await sleep(i * 16)
      while (Date.now() < end) {
        const started = Date.now()
        const res = await request(svr.port, '/', { agent })
        if (res.status === 200) admitted++
        else refusals.push(res)
        await sleep(Math.max(0, 133 - (Date.now() - started)))
      }
    }))
    // 20 a second for 10 s, within 10 %.
    assert.ok(admitted >= 180 && admitted <= 220, admitted + ' admitted')
    assert.ok(refusals.length > 300, refusals.length + ' refused')
    for (const res of refusals.slice(0, 20)) {
      assert.equal(res.status, 429)
      assert.equal(res.headers['retry-after'], '1')
      assert.equal(res.headers['ratelimit-policy'], '"limit0";q=20;w=1')
      assert.equal(res.headers.ratelimit, '"limit0";r=0;t=1')
    }
  })

  it('admits the burst at once with nodelay, and spaces it out by the rate without', async (t) => {
    const { svr } = await limited(t, [
      { name: 'at-once', path: '/now', rate: 5, burst: 4 },
      { name: 'spaced', path: '/spaced', rate: 2, burst: 3, delay: 1 }
    ], { workers: 1 })
    const before = Date.now()
    assert.deepEqual(statuses(await burst(svr.port, 8, '/now')), [429, 429, 429, 'in', 'in', 'in', 'in', 'in'])
    // nodelay: the burst without waiting for the rate, which would take
    // 200 ms a request, 800 ms for the last. The margin is for a loaded
    // machine.
    assert.ok(Date.now() - before < 500, (Date.now() - before) + ' ms')
    // An API client gets its 429 as JSON, with the same fields.
    const json = await request(svr.port, '/now', { headers: { accept: 'application/json' } })
    assert.deepEqual([json.status, json.headers['content-type'], json.headers['retry-after'], json.headers['ratelimit-policy']],
      [429, 'application/json; charset=utf-8', '1', '"at-once";q=5;w=1'])
    assert.deepEqual(JSON.parse(json.body), {
      type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'Too many requests were sent; try again later.', requestId: json.headers['x-request-id']
    })
    const started = Date.now()
    const times = []
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(svr.port, '/spaced').then((res) => {
      times.push(Date.now() - started)
      return res
    })))
    // One at the rate and the first of the burst at once, the two beyond
    // `delay` 500 and 1000 ms later (2 a second), the rest refused. The
    // rate is slow so that a loaded machine's delays stay well under it.
    assert.deepEqual(statuses(answers), [429, 429, 'in', 'in', 'in', 'in'])
    times.sort((a, b) => a - b)
    assert.ok(times[3] < 400, JSON.stringify(times))
    assert.ok(times[4] >= 480 && times[5] >= 980, JSON.stringify(times))
  })

  it('never limits an allowed address, and keys by header, by user or by address', async (t) => {
    const { svr } = await limited(t, [
      { path: '/open', rate: 1, per: 'minute', allow: ['127.0.0.0/8'] },
      { path: '/api', rate: 1, per: 'minute', key: 'header', header: 'X-Api-Key' }
    ], { workers: 1 })
    assert.deepEqual(statuses(await burst(svr.port, 20, '/open')), Array(20).fill('in'))
    // One a minute per key: the first of each key, and the one without (by its address).
    const got = []
    for (const key of ['a', 'a', 'b', 'b', null, null]) {
      got.push(outcome((await request(svr.port, '/api', { headers: key === null ? {} : { 'x-api-key': key } })).status))
    }
    assert.deepEqual(got, ['in', 429, 'in', 429, 'in', 429])
  })

  it('limits the requests of one key in progress (connections)', async (t) => {
    const upstream = await startUpstream(t, {
      handler (req, res) {
        upstream.active = (upstream.active || 0) + 1
        upstream.peak = Math.max(upstream.peak || 0, upstream.active)
        setTimeout(() => {
          upstream.active--
          echo(req, res, upstream)
        }, 500)
      }
    })
    const { svr } = await limited(t, [{ path: '/', connections: 2 }], { workers: 1, proxy: [{ path: '/', upstreams: [upstream.origin] }] })
    assert.deepEqual(statuses(await burst(svr.port, 5, '/x')), [429, 429, 429, 'in', 'in'])
    assert.equal(upstream.peak, 2)
    // Once they are over, two more.
    assert.deepEqual(statuses(await burst(svr.port, 2, '/x')), ['in', 'in'])
  })

  it('applies every matching rule, and counts a request only when none refused it', async (t) => {
    const { svr } = await limited(t, [
      { name: 'site', path: '/', rate: 1, per: 'minute', burst: 1 },
      { name: 'page', path: '/x', rate: 1, per: 'minute' }
    ], { workers: 1 })
    const got = []
    for (const target of ['/x', '/x', '/y', '/y']) got.push(outcome((await request(svr.port, target)).status))
    // The second /x is refused by "page": "site" has not counted it, and has room for one more.
    assert.deepEqual(got, ['in', 429, 'in', 429])
    const refused = await request(svr.port, '/x')
    assert.equal(refused.headers['ratelimit-policy'], '"site";q=1;w=60')
  })

  it('only logs and counts in a dry run', async (t) => {
    const { svr, site } = await limited(t, [{ name: 'trial', path: '/x', rate: 1, per: 'minute', dryRun: true }],
      { workers: 1, metricsPath: '/metrics', logDirectory: 'logs', logFlushDelay: 0 })
    assert.deepEqual(statuses(await burst(svr.port, 5, '/x')), Array(5).fill('in'))
    await svr.waitFor(/rate limit trial would refuse 127\.0\.0\.1 \(dry run\)/)
    const metrics = (await request(svr.port, '/metrics')).body
    assert.match(metrics, /\nsvr_rate_limited_total\{rule="trial",action="dry-run",worker="1"\} 4\n/)
    const log = await fs.readFile(path.join(site.dir, 'logs', 'access.log'), 'utf8')
    assert.equal(log.split('\n').filter((line) => line.endsWith(' rate_limit=dry-run')).length, 4)
  })

  it('keeps at most maxKeys keys: the least recently used one starts afresh', async (t) => {
    const { svr } = await limited(t, [{ path: '/', rate: 1, per: 'hour', burst: 1, key: 'header', header: 'X-Key', maxKeys: 2 }], { workers: 1 })
    const send = async (key) => outcome((await request(svr.port, '/', { headers: { 'x-key': key } })).status)
    // Two an hour per key.
    assert.deepEqual([await send('a'), await send('a'), await send('a')], ['in', 'in', 429])
    await sleep(250)
    assert.deepEqual([await send('b'), await send('c')], ['in', 'in'])
    // a was dropped in the worker and in the primary when c came: it has
    // its two again (a primary that kept it would send its full bucket
    // back after the first).
    await sleep(250)
    assert.equal(await send('a'), 'in')
    await sleep(250)
    assert.deepEqual([await send('a'), await send('a')], ['in', 429])
  })

  it('names the pointer of a rule that cannot work', async (t) => {
    const site = await makeSite(t, {
      rateLimits: [
        { path: '/a', rate: 10, key: 'header' },
        { path: '/b' },
        { path: 'c', rate: 0, per: 'day', allow: ['10.0.0.300'], methods: ['get'] }
      ]
    })
    const { code, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 1)
    const file = site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      file + '/rateLimits/2/path: must start with "/"',
      file + '/rateLimits/2/methods/0: must be an upper-case method name',
      file + '/rateLimits/2/rate: must be > 0 (got 0)',
      file + '/rateLimits/2/per: must be one of second, minute, hour',
      file + '/rateLimits/2/allow/0: must be an IP address, a CIDR range or "localhost"',
      file + '/rateLimits/0/header: is needed with key "header"',
      file + '/rateLimits/1: sets neither rate nor connections, so it limits nothing'
    ])
  })
})
