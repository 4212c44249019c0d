'use strict'

// The deployments users run: an application restarted behind svr (alone,
// or two with health checks), and POSTs while one of two is refusing.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { waitUntil } = require('../helpers/wait')
const { startUpstream } = require('../helpers/upstream')

/**
 * Requests in `parallel` loops over keep-alive connections until stop();
 * every answer's time and status.
 */
function loop (port, { parallel = 2, method = 'GET', body } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel })
  const answers = []
  let running = true
  async function one () {
    while (running) {
      let status
      try {
        status = (await request(port, '/app', { agent, method, body })).status
      } catch (err) {
        status = err.code || err.message
      }
      answers.push({ at: Date.now(), status })
      // A few ms apart: a restart of a second is seen by hundreds of requests.
      await sleep(5)
    }
  }
  const loops = Array.from({ length: parallel }, one)
  return {
    answers,
    async stop () {
      running = false
      await Promise.all(loops)
      agent.destroy()
      return answers
    }
  }
}

// The first answer with `status` at or after `since`, in ms after it.
function firstAfter (answers, since, status) {
  const found = answers.find((answer) => answer.at >= since && answer.status === status)
  return found === undefined ? Infinity : found.at - since
}

async function proxied (t, route) {
  const site = await makeSite(t, { workers: 2, proxy: [{ path: '/', ...route }] })
  return startSvr(t, site.configFile)
}

describe('proxy: applications restarted behind svr', () => {
  it('one application, no health check (the first recipe): answers again within 1 s of listening', async (t) => {
    const app = await startUpstream(t, { name: 'app' })
    const svr = await proxied(t, { upstreams: [app.origin] })
    const requests = loop(svr.port)
    await sleep(300)
    await app.stop()
    await sleep(1000)
    await app.start()
    const listening = Date.now()
    await sleep(1500)
    const answers = await requests.stop()
    const during = answers.filter((answer) => answer.status !== 200)
    // While it was down: 502 (the connection was refused), never 503.
    assert.deepEqual([...new Set(during.map((answer) => answer.status))], [502])
    assert.ok(firstAfter(answers, listening, 200) <= 1000, 'first 200 ' + firstAfter(answers, listening, 200) + ' ms after listening')
    // And nothing but 200 once the first came.
    const back = answers.findIndex((answer) => answer.at >= listening && answer.status === 200)
    assert.deepEqual(answers.slice(back).filter((answer) => answer.status !== 200), [])
    assert.doesNotMatch(svr.output, /is out for/)
  })

  it('two applications with health checks, both restarted: 503 with Retry-After while both are out, answers within 1 s of listening', async (t) => {
    const apps = [await startUpstream(t, { name: 'a' }), await startUpstream(t, { name: 'b' })]
    const svr = await proxied(t, {
      upstreams: apps.map((app) => app.origin),
      policy: 'least-connections',
      // Checks slower than the test's bound: only trying upstreams that are out
      // (half-open) answers within 1 s of the applications listening again.
      healthCheck: { path: '/healthz', interval: 1000, timeout: 500, rise: 2, fall: 1 },
      maxFails: 1,
      failTimeout: 10000
    })
    const requests = loop(svr.port)
    await sleep(300)
    await Promise.all(apps.map((app) => app.stop()))
    // Long enough for the checks to take both out.
    for (const app of apps) await svr.waitFor(new RegExp('proxy upstream ' + app.origin + ' is unhealthy'))
    await sleep(300)
    const mark = Date.now()
    const retryAfter = await request(svr.port, '/app')
    await Promise.all(apps.map((app) => app.start()))
    const listening = Date.now()
    await sleep(1500)
    const answers = await requests.stop()
    assert.deepEqual([retryAfter.status, retryAfter.headers['retry-after']], [503, '1'])
    assert.ok(answers.some((answer) => answer.at < mark && answer.status === 503))
    assert.ok(firstAfter(answers, listening, 200) <= 1000, 'first 200 ' + firstAfter(answers, listening, 200) + ' ms after listening')
  })

  it('POSTs while one of two applications refuses connections: none fails', async (t) => {
    const live = await startUpstream(t, { name: 'live' })
    const refusing = await startUpstream(t, { name: 'refusing' })
    await refusing.stop()
    // Passive health off: every request that picks the refusing one goes on to the live one.
    const svr = await proxied(t, { upstreams: [refusing.origin, live.origin], maxFails: 0 })
    const requests = loop(svr.port, { parallel: 4, method: 'POST', body: 'order=42&item=' + 'x'.repeat(2000) })
    // At least 200 POSTs, however slow the machine (each has an even chance of the refusing one first).
    await waitUntil(async () => requests.answers.length >= 200, 'only ' + requests.answers.length + ' answers', 30000)
    const answers = await requests.stop()
    assert.deepEqual(answers.filter((answer) => answer.status !== 200), [])
    assert.equal(live.hits, answers.length)
    // About half of them were first sent to the refusing one.
    const retried = (svr.output.match(/upstream http:\S+ failed: ECONNREFUSED/g) || []).length
    assert.ok(retried > answers.length / 4, retried + ' of ' + answers.length)
  })
})
