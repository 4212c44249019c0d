'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { startUpstream } = require('../helpers/upstream')

// Answers after 60 ms, so the upstream's time has a floor.
function slowly (req, res) {
  setTimeout(() => res.end('slow'), 60)
}

describe('proxy access log', () => {
  it('should write the upstream and its time after the request id (combined)', async (t) => {
    const upstream = await startUpstream(t, { handler: slowly })
    const refused = await startUpstream(t)
    await refused.stop()
    const site = await makeSite(t, {
      workers: 1,
      proxy: [{ path: '/app', upstreams: [upstream.origin] }, { path: '/gone', upstreams: [refused.origin], maxFails: 0 }]
    })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/app/x')
    assert.equal(res.status, 200)
    const id = res.headers['x-request-id']
    const line = (await svr.waitFor(new RegExp('"GET /app/x HTTP/1.1" 200 4 "-" "-" "' + id + '" upstream=(\\S+) upstream_time=(\\d+\\.\\d{3})\\n')))
    assert.equal(line[1], upstream.origin)
    assert.equal(Number(line[2]) >= 0.06, true, line[0])
    const failed = await request(svr.port, '/gone')
    assert.equal(failed.status, 502)
    const failedLine = await svr.waitFor(new RegExp('"GET /gone HTTP/1.1" 502 \\d+ "-" "-" "' + failed.headers['x-request-id'] + '" upstream=(\\S+) upstream_time=\\d+\\.\\d{3}\\n'))
    assert.equal(failedLine[1], refused.origin)
    // Requests that are not proxied keep the plain combined line.
    const index = await request(svr.port, '/')
    await svr.waitFor(new RegExp('"GET / HTTP/1.1" 200 \\d+ "-" "-" "' + index.headers['x-request-id'] + '"\\n'))
  })

  it('should add upstream and upstreamTime to JSON lines of proxied requests', async (t) => {
    const upstream = await startUpstream(t, { handler: slowly })
    const site = await makeSite(t, { workers: 1, logFormat: 'json', proxy: [{ path: '/app', upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/app')
    const match = await svr.waitFor(new RegExp('\\{[^\\n]*"requestId":"' + res.headers['x-request-id'] + '"[^\\n]*\\}\\n'))
    const entry = JSON.parse(match[0])
    assert.equal(entry.upstream, upstream.origin)
    assert.equal(entry.upstreamTime >= 60 && entry.upstreamTime <= entry.duration, true, match[0])
    assert.deepEqual(Object.keys(entry).slice(-3), ['completed', 'upstream', 'upstreamTime'])
  })
})
