'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { setTimeout: sleep } = require('node:timers/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { clientLoop } = require('../helpers/client-loop')
const { startUpstream, echo } = require('../helpers/upstream')
const { waitUntil } = require('../helpers/wait')

const CHECK = { path: '/health', interval: 200, timeout: 500, rise: 2, fall: 2 }

// Counts the active checks it gets; everything else is echoed.
function countingHandler (counter) {
  return (req, res, upstream) => {
    if (req.url === '/health') {
      counter.checks++
      res.end('ok')
      return
    }
    echo(req, res, upstream)
  }
}

// Wait until the loop has had `count` requests answered (or failed).
async function answered (loop, count) {
  while (loop.stats.ok + loop.stats.errors.length < count) await sleep(20)
}

async function names (port, count) {
  const seen = []
  for (let i = 0; i < count; i++) seen.push(JSON.parse((await request(port, '/x')).body).name)
  return seen
}

describe('proxy health', () => {
  it('should lose no request when an upstream dies, and take it back once active checks pass', async (t) => {
    const counter = { checks: 0 }
    const a = await startUpstream(t, { name: 'a', handler: countingHandler(counter) })
    const b = await startUpstream(t, { name: 'b', handler: countingHandler(counter) })
    const site = await makeSite(t, {
      workers: 1,
      allowStatus: true,
      metricsPath: '/metrics',
      proxy: [{ path: '/x', upstreams: [a.origin, b.origin], healthCheck: CHECK, maxFails: 1, failTimeout: 600000 }]
    })
    const svr = await startSvr(t, site.configFile)
    const loop = clientLoop(svr.port, '/x')
    await answered(loop, 3)
    await a.stop()
    const atStop = loop.stats.ok + loop.stats.errors.length
    await svr.waitFor(/proxy upstream http:\/\/127\.0\.0\.1:\d+ is unhealthy after 2 failed checks of \/health: ECONNREFUSED/)
    // Requests went on while it was down, and after it was found out.
    await answered(loop, atStop + 3)
    await loop.stop()
    assert.deepEqual(loop.stats.errors, [])
    assert.deepEqual(await names(svr.port, 2), ['b', 'b'])
    const status = await request(svr.port, '/svrjsstatus.svr')
    assert.match(status.body, new RegExp('<tr class="upstream"><td>' + a.origin + '</td><td>out in 1 of 1 workers</td>'))
    const metrics = (await request(svr.port, '/metrics')).body
    assert.match(metrics, new RegExp('\nsvr_proxy_upstream_healthy\\{upstream="' + a.origin + '",worker="1"\\} 0\n'))
    assert.match(metrics, new RegExp('\nsvr_proxy_upstream_healthy\\{upstream="' + b.origin + '",worker="1"\\} 1\n'))
    await a.start()
    await svr.waitFor(/proxy upstream http:\/\/127\.0\.0\.1:\d+ is healthy again \(2 checks of \/health passed\)/)
    // The primary logs its verdict as it sends it; the worker has it a moment later.
    const healthyA = new RegExp('\nsvr_proxy_upstream_healthy\\{upstream="' + a.origin + '",worker="1"\\} 1\n')
    await waitUntil(async () => healthyA.test((await request(svr.port, '/metrics')).body), 'the worker has a back in rotation')
    // The passive exclusion (600 s) ended with the active verdict.
    assert.deepEqual((await names(svr.port, 4)).sort(), ['a', 'a', 'b', 'b'])
  })

  it('should run each active check once in the primary, not once per worker', async (t) => {
    const counter = { checks: 0 }
    const a = await startUpstream(t, { name: 'a', handler: countingHandler(counter) })
    const site = await makeSite(t, {
      workers: 3,
      proxy: [{ path: '/', upstreams: [a.origin], healthCheck: CHECK }, { path: '/other', upstreams: [a.origin], healthCheck: CHECK }]
    })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/worker 3 up/)
    await sleep(300)
    const before = counter.checks
    const started = Date.now()
    await sleep(1200)
    const checks = counter.checks - before
    const most = Math.floor((Date.now() - started) / CHECK.interval) + 1
    // Three workers checking on their own would make about three times as many.
    assert.equal(checks <= most, true, checks + ' checks in ' + (Date.now() - started) + ' ms')
    assert.equal(checks >= 1, true)
    await a.stop()
    await svr.waitFor(/is unhealthy after 2 failed checks/)
    await sleep(500)
    assert.equal(svr.output.match(/is unhealthy after/g).length, 1)
  })
})
