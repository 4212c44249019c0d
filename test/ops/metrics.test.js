'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

// name{label="value",...} number — the Prometheus text format, one sample a line.
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/
const COMMENT = /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/

/**
 * @param {string} text a scrape
 * @returns {Array<{name: string, labels: object, value: number}>}
 */
function parseMetrics (text) {
  const samples = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    if (line.startsWith('#')) {
      assert.match(line, COMMENT)
      continue
    }
    const m = SAMPLE.exec(line)
    assert.ok(m, 'not a Prometheus sample: ' + line)
    const labels = {}
    for (const pair of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2]
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return samples
}

function total (samples, name, match = {}) {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}

describe('Prometheus metrics endpoint', () => {
  const scope = createScope()
  let svr

  before(async () => {
    const site = await makeSite(scope, { workers: 2, metricsPath: '/metrics' })
    svr = await startSvr(scope, site.configFile)
  })
  after(() => scope.cleanup())

  async function scrape () {
    const res = await request(svr.port, '/metrics')
    assert.equal(res.status, 200)
    assert.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
    const samples = parseMetrics(res.body)
    samples.bodyBytes = Buffer.byteLength(res.body)
    return samples
  }

  it('should count requests by status class, body bytes and latency across the workers', async () => {
    const before = await scrape()
    const N = 24
    let bytes = 0
    for (let i = 0; i < N; i++) {
      const res = await request(svr.port, '/missing-' + i)
      assert.equal(res.status, 404)
      bytes += Buffer.byteLength(res.body)
    }
    const afterScrape = await scrape()
    assert.equal(total(afterScrape, 'svr_http_requests_total', { class: '4xx' }) -
      total(before, 'svr_http_requests_total', { class: '4xx' }), N)
    // In between: the 404 pages and the first scrape's own body.
    const counted = total(afterScrape, 'svr_http_response_body_bytes_total') - total(before, 'svr_http_response_body_bytes_total')
    assert.equal(counted, bytes + before.bodyBytes)
    const count = total(afterScrape, 'svr_http_request_duration_seconds_count') - total(before, 'svr_http_request_duration_seconds_count')
    assert.ok(count === N + 1, 'every request observed once (the 404s and the first scrape): ' + count)
    const inf = total(afterScrape, 'svr_http_request_duration_seconds_bucket', { le: '+Inf' })
    assert.equal(inf, total(afterScrape, 'svr_http_request_duration_seconds_count'))
  })

  it('should keep one row per worker and report the primary\'s counters', async () => {
    const samples = await scrape()
    const up = samples.filter((s) => s.name === 'svr_worker_up')
    assert.deepEqual(up.map((s) => s.labels.worker).sort(), ['1', '2'])
    assert.ok(up.every((s) => s.value === 1))
    const connections = samples.filter((s) => s.name === 'svr_http_connections_active')
    assert.deepEqual(connections.map((s) => s.labels.worker).sort(), ['1', '2'])
    // The scrape's own connection is open while the metrics are gathered.
    assert.ok(connections.reduce((sum, s) => sum + s.value, 0) >= 1)
    for (const s of samples.filter((s) => s.name.startsWith('svr_http_'))) {
      assert.ok(s.labels.worker === '1' || s.labels.worker === '2', s.name + ' has a worker label')
    }
    assert.equal(total(samples, 'svr_worker_restarts_total'), 0)
    assert.equal(samples.filter((s) => s.name === 'svr_reloads_total').length, 3)
  })

  it('should count a worker restart and a reload', async () => {
    const pids = svr.workerPids()
    const mark = svr.output.length
    process.kill(pids.get(1), 'SIGKILL')
    await svr.waitFor(/worker 1 replaced/, 10000, mark)
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 20000, mark)
    const samples = await scrape()
    assert.equal(total(samples, 'svr_worker_restarts_total'), 1)
    assert.equal(total(samples, 'svr_reloads_total', { result: 'applied' }), 1)
  })

  it('should answer only GET and HEAD', async () => {
    const res = await request(svr.port, '/metrics', { method: 'DELETE' })
    assert.equal(res.status, 405)
  })
})

describe('metrics endpoint access', () => {
  it('should not exist for clients outside metricsAllow, loopback included', async (t) => {
    const site = await makeSite(t, { workers: 1, metricsPath: '/metrics', metricsAllow: ['192.0.2.0/24'] })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/metrics')
    assert.equal(res.status, 404)
    assert.doesNotMatch(res.body, /svr_http/)
  })

  it('should not exist at all without metricsPath', async (t) => {
    const site = await makeSite(t, { workers: 1 })
    const svr = await startSvr(t, site.configFile)
    const res = await request(svr.port, '/metrics')
    assert.equal(res.status, 404)
  })
})

module.exports = { parseMetrics }
